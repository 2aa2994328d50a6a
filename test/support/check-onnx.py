# The ONNX files test/onnx-export.test.ts wrote, checked by ONNX's own tools:
# onnx.checker with full checks (shape inference in strict mode), and, where
# python3-onnxruntime is installed, onnxruntime's outputs against firebrand's.
# argv[1]: a JSON list of { file, inputs, expected, tolerance }, tensors as
# { data, shape, dtype }. Prints a JSON object of what ran and what differed.
import json
import sys

import numpy as np
import onnx

try:
    import onnxruntime
except ImportError as error:
    onnxruntime = None
    missing = str(error)

cases = json.load(open(sys.argv[1]))
result = {'onnx': onnx.__version__, 'checked': [], 'newerOpset': [], 'failures': []}
if onnxruntime is None:
    result['onnxruntimeMissing'] = missing
else:
    result['onnxruntime'] = onnxruntime.__version__
for case in cases:
    model = onnx.load(case['file'])
    # An onnx older than the file's opset has no schemas to check it against (1.12 stops at 17).
    if model.opset_import[0].version > onnx.defs.onnx_opset_version():
        result['newerOpset'].append(case['file'])
        continue
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as error:  # the checker's own error types differ between versions
        result['failures'].append({'file': case['file'], 'checker': str(error)})
        continue
    result['checked'].append(case['file'])
    if onnxruntime is None:
        continue
    session = onnxruntime.InferenceSession(case['file'], providers=['CPUExecutionProvider'])
    # JSON writes NaN as null, which float64 reads back as NaN; text stays Python strings.
    feeds = {
        name: np.array(
            [np.nan if value is None else value for value in tensor['data']], dtype=tensor['dtype']
        ).reshape(tensor['shape'])
        for name, tensor in case['inputs'].items()
    }
    outputs = dict(zip([output.name for output in session.get_outputs()], session.run(None, feeds)))
    for name, tensor in case['expected'].items():
        want = np.array(tensor['data'], dtype=np.float64).reshape(tensor['shape'])
        got = outputs[name].astype(np.float64)
        error = float(np.max(np.abs(got - want) / np.maximum(1, np.abs(want)))) if want.size else 0.0
        if got.shape != want.shape or error > case['tolerance']:
            result['failures'].append(
                {'file': case['file'], 'output': name, 'shape': list(got.shape), 'error': error}
            )
print(json.dumps(result))
