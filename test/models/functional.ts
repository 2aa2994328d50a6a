// F's convolutions, poolings of every dimension, scaled dot-product attention,
// cumsum, rmsNorm and rotary embeddings, each returned as an output: the same
// class as Functional in scripts/make-module-fixtures.py.
import { applyRotaryPosEmb, F, nn, Parameter, RotaryEmbedding, Tensor, torch } from '../../src';

export class Functional extends nn.Module {
  w1 = new nn.Parameter([6, 4, 3]);
  w2 = new nn.Parameter([4, 2, 3, 3]);
  w3 = new nn.Parameter([2, 4, 3, 3, 3]);
  b1 = new nn.Parameter([6]);
  g = new nn.Parameter([16]);
  rotary = new RotaryEmbedding(4);
  keep = new nn.Buffer([4, 4], { dtype: 'bool', data: [1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1] });

  constructor() {
    super();
    for (const weight of [this.w1, this.w2, this.w3, this.b1, this.g] as Parameter[]) nn.init.normal_(weight);
  }

  /** x: [2, 4, 16]. */
  forward(x: Tensor): Record<string, Tensor> {
    const x2 = x.view(2, 4, 4, 4);
    const x3 = x.view(2, 4, 2, 2, 4);
    // x2 as [batch, heads, positions, head dim] for rotary embeddings.
    const [cos, sin] = this.rotary.forward(x2, torch.arange(x2.size(2)).unsqueeze(0));
    const [q, k] = applyRotaryPosEmb(x2, x2.sin(), cos, sin);
    return {
      conv1d: F.conv1d(x, this.w1, this.b1, { stride: 2, padding: 1 }),
      conv2d: F.conv2d(x2, this.w2, null, { padding: [1, 0], dilation: [2, 1], groups: 2 }),
      conv3d: F.conv3d(x3, this.w3, null, { padding: 1 }),
      maxPool1d: F.maxPool1d(x, 3, { stride: 2, padding: 1 }),
      maxPool2d: F.maxPool2d(x2, 3, { stride: 1, padding: 1, dilation: 1, ceilMode: true }),
      maxPool3d: F.maxPool3d(x3, 2),
      avgPool1d: F.avgPool1d(x, 4, { stride: 3, padding: 1, countIncludePad: false }),
      avgPool2d: F.avgPool2d(x2, 2, { ceilMode: true }),
      avgPool3d: F.avgPool3d(x3, [1, 2, 2]),
      adaptiveAvgPool1d: F.adaptiveAvgPool1d(x, 5),
      adaptiveAvgPool2d: F.adaptiveAvgPool2d(x2, [3, 2]),
      adaptiveAvgPool3d: F.adaptiveAvgPool3d(x3, 1),
      attention: F.scaledDotProductAttention(x2, x2.sin(), x2.cos()),
      attentionCausal: F.scaledDotProductAttention(x2, x2.sin(), x2.cos(), { isCausal: true, scale: 0.3 }),
      attentionBoolMask: F.scaledDotProductAttention(x2, x2.sin(), x2.cos(), { attnMask: this.keep }),
      attentionFloatMask: F.scaledDotProductAttention(x2, x2.sin(), x2.cos(), { attnMask: x2.tanh() }),
      attentionWindow: F.slidingWindowAttention(x2, x2.sin(), x2.cos(), 2, { scale: 0.3 }),
      cumsum: x.cumsum(-1),
      rmsNorm: F.rmsNorm(x, [16], this.g, 1e-6),
      rmsNormNoWeight: F.rmsNorm(x2, [4, 4]),
      rotaryCos: cos,
      rotarySin: sin,
      rotaryQ: q,
      rotaryK: k,
    };
  }
}
