// Runs the exported model with onnxruntime-web (WebAssembly). The file was
// exported with includePreprocessing, so it takes the raw 28x28 gray pixels
// [1, 1, 28, 28] as uint8, exactly as Fashion-MNIST stores them.
/* global ort */
const CLASSES = [
  'T-shirt/top',
  'Trouser',
  'Pullover',
  'Dress',
  'Coat',
  'Sandal',
  'Shirt',
  'Sneaker',
  'Bag',
  'Ankle boot',
];
const drawing = document.getElementById('drawing');
const context = drawing.getContext('2d');
const status = document.getElementById('status');

ort.env.wasm.wasmPaths = new URL('ort/', location.href).href;
ort.env.wasm.numThreads = 1; // threads need cross-origin isolation, which a plain static server lacks

/** The canvas as 28x28 gray pixels (the red channel of a white-on-black drawing or a gray image). */
function pixelsOf(source) {
  const small = document.createElement('canvas');
  small.width = 28;
  small.height = 28;
  const smallContext = small.getContext('2d', { willReadFrequently: true });
  smallContext.imageSmoothingEnabled = source.width !== 28;
  smallContext.drawImage(source, 0, 0, 28, 28);
  const rgba = smallContext.getImageData(0, 0, 28, 28).data;
  return Uint8Array.from({ length: 784 }, (_, i) => rgba[4 * i]);
}

function show(logits) {
  const top = Math.max(...logits);
  const exps = logits.map((value) => Math.exp(value - top));
  const total = exps.reduce((a, b) => a + b, 0);
  const ranked = exps.map((value, index) => ({ index, p: value / total })).sort((a, b) => b.p - a.p);
  document.getElementById('classes').innerHTML = ranked
    .slice(0, 5)
    .map(
      ({ index, p }) =>
        `<li>${CLASSES[index]} ${(100 * p).toFixed(1)}%<span class="bar" style="width:${Math.round(150 * p)}px"></span></li>`,
    )
    .join('');
}

async function main() {
  const session = await ort.InferenceSession.create('model.onnx', { executionProviders: ['wasm'] });
  status.textContent = `model.onnx loaded (inputs ${session.inputNames.join(', ')}); onnxruntime-web ${ort.env.versions.web}`;
  const classify = async (source) => {
    const pixels = pixelsOf(source);
    const outputs = await session.run({ input: new ort.Tensor('uint8', pixels, [1, 1, 28, 28]) });
    const logits = Array.from(outputs.output.data);
    show(logits);
    return { pixels: Array.from(pixels), logits };
  };

  let drawingNow = false;
  const stroke = (event) => {
    if (!drawingNow) return;
    const box = drawing.getBoundingClientRect();
    context.fillStyle = '#fff';
    context.beginPath();
    context.arc(event.clientX - box.left, event.clientY - box.top, 14, 0, 2 * Math.PI);
    context.fill();
  };
  drawing.addEventListener('pointerdown', (event) => {
    drawingNow = true;
    stroke(event);
  });
  drawing.addEventListener('pointermove', stroke);
  drawing.addEventListener('pointerup', () => {
    drawingNow = false;
    classify(drawing);
  });
  document.getElementById('clear').addEventListener('click', () => context.clearRect(0, 0, 280, 280));
  document.getElementById('file').addEventListener('change', async (event) => {
    const image = await createImageBitmap(event.target.files[0]);
    context.imageSmoothingEnabled = false;
    context.drawImage(image, 0, 0, 280, 280);
    classify(image);
  });

  // ?image=<url>: classify that image on load and leave the result in #result (what the test reads).
  const given = new URLSearchParams(location.search).get('image');
  if (given !== null) {
    const image = await createImageBitmap(await (await fetch(given)).blob());
    context.imageSmoothingEnabled = false;
    context.drawImage(image, 0, 0, 280, 280);
    const result = await classify(image);
    document.getElementById('result').textContent = JSON.stringify(result);
  }
}

main().catch((error) => {
  status.textContent = `failed: ${error.message}`;
  document.getElementById('result').textContent = JSON.stringify({ error: String(error) });
});
