"""The one place where the UI calls the other packages (``tsm_apps``, ``detection``, ``dissect``).

Views only see the plain records defined here (:class:`AttentionClip`, :class:`ModelMaps`) and
detection's own (:mod:`detection.records`), so that a change in a package's API is a change in
this package only.
``detection`` (mmdet) and ``dissect`` are imported inside the functions that use them, so a
view that needs neither starts fast; results that are absent raise :class:`Unavailable`, which
the views show as a message. One module per concern: :mod:`.base` (video), :mod:`.detection`,
:mod:`.dissection`, :mod:`.recognition` (checkpoints, maps and streaming on any video),
:mod:`.flow` (the flow stream's maps beside the RGB ones).
"""
from .base import (MODELS, VID_FRAME_TEMPLATE, DecodeLimits, Decoded, Progress, Unavailable,
                   VideoDecodeError, read_frames, read_video, working_size)
from .checkpoints import *  # noqa: F401,F403
from .detection import *  # noqa: F401,F403
from .dissection import *  # noqa: F401,F403
from .flow import *  # noqa: F401,F403
from .recognition import *  # noqa: F401,F403
