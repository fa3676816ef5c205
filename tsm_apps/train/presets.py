"""Named training recipes (``tsm train --preset NAME``), each field citing its source."""
from __future__ import annotations

# Named recipes (``tsm train --preset NAME``); fields not named keep their defaults.
PRESETS: dict = {
    # the synthetic temporal set (tsm synth temporal): TSM >= 90% val top-1, TSN near chance,
    # each run within 10 minutes on one CPU core (see README for the measured numbers)
    # Adam: SGD at lr 0.05 per 8 clips sits on the loss plateau for ~12 epochs (val top-1 53%
    # after 20 epochs on the seed-0 set); multigrid keeps >= 16 steps per epoch of 480 clips
    # scale_size 112: the 112x112 frames are seen whole at validation/test (no centre crop)
    "synthetic": {"arch": "resnet18", "width": 0.25, "segments": 8, "size": 112, "scale_size": 112,
                  "epochs": 20, "batch_size": 16, "optimizer": "adam", "lr_per_8": 0.0005,
                  "warmup_epochs": 1.0, "dropout": 0.5, "min_area": 0.5,
                  "multigrid": {"min_steps": 16}},
    # "Training Kinetics in 15 minutes" (Lin et al. 2019), TSM ResNet-50 on Kinetics-400
    "kinetics": {
        "arch": "resnet50", "segments": 8, "shift": "offline",  # ResNet-50 TSM, 8 segments
        "epochs": 100,  # paper: 100 epochs
        "batch_size": 8,  # paper: 8 clips per GPU (x the GPUs: set --batch-size 8*W)
        "lr_per_8": 0.00125,  # paper: 0.00125 per 8 clips, scaled linearly with the batch
        "warmup_epochs": 5.0, "min_lr_ratio": 0.0,  # paper: 5-epoch linear warm-up, cosine
        "optimizer": "sgd", "momentum": 0.9,  # paper: SGD, momentum 0.9
        "weight_decay": 1e-4,  # paper: 1e-4, none on BN and biases (recipe.param_groups)
        "dropout": 0.0,  # paper: no dropout
        "crop": "multiscale", "size": 224,  # TSN's GroupMultiScaleCrop to 224 for training
        # test: 10 clips at shorter side 256: tsm test --clips 10 --scale-size 256
    },
    # the official TSM script (mit-han-lab/temporal-shift-module, scripts/train_tsm_kinetics_rgb_8f.sh)
    "official": {
        "arch": "resnet50", "segments": 8, "shift": "offline", "fold_div": 8,  # shift_div 8 blockres
        "epochs": 50,  # --epochs 50
        "batch_size": 128, "lr_per_8": 0.02 / 16,  # --lr 0.02 for --batch-size 128 (lr_steps 20 40
        # in the script: step decay; here the cosine of --lr_type cos, the repo's other option)
        "warmup_epochs": 0.0, "optimizer": "sgd", "momentum": 0.9,  # main.py: SGD momentum 0.9
        "weight_decay": 1e-4,  # --wd 1e-4
        "dropout": 0.5,  # --dropout 0.5
        "clip_grad": 20.0,  # --gd 20
        "crop": "multiscale", "size": 224,  # GroupMultiScaleCrop(224, [1, .875, .75, .66])
        "bn": "train",  # --npb: no partial BN
    },
}
