"""Engine files: a recognizer exported for a runtime (ONNX Runtime), with what it needs to run
stored inside it (:mod:`.metadata`: kind, test protocol, class names, precision, parity figures),
the runtime that runs it as a recognizer (:mod:`.runtime`), the precisions it can be converted to
(:mod:`.precision`) and the parity gate it must pass before it is written (:mod:`.parity`).

``tsm export CKPT --out m.onnx --engine onnxruntime`` writes one; ``tsm test m.onnx --data ...``
runs it under the stored protocol."""
