// torch.nn.TransformerEncoderLayer, TransformerDecoderLayer and
// TransformerEncoder as modules of built-in layers, with PyTorch's field names
// (self_attn, linear1, norm1, ...) so state dicts move both ways, its defaults
// and its forward; the encoder's layers are copies of the layer given, as
// PyTorch's deep copies are (the same initial weights in every layer).
import { firebrandError } from '../../errors';
import { F } from './functional';
import { cloneModule } from './clone';
import { MultiheadAttention } from './attention';
import { FunctionalLayer } from './functional-layers';
import { Layer, Module, ModuleList } from './module';
import type { Tensor } from './tensor';

export interface TransformerLayerOptions {
  /** Default 2048. */
  dimFeedforward?: number;
  /** Default 0.1. */
  dropout?: number;
  /** Default 'relu'. */
  activation?: 'relu' | 'gelu';
  /** Default 1e-5. */
  layerNormEps?: number;
  /** Inputs as [N, L, E] instead of [L, N, E]. Default false. */
  batchFirst?: boolean;
  /** LayerNorm before attention and feed-forward (pre-norm) instead of after. Default false. */
  normFirst?: boolean;
}

// The layers a transformer layer is made of, as nn's builders make them.
const parts = {
  attention: (embedDim: number, numHeads: number, { dropout, batchFirst }: Required<TransformerLayerOptions>) =>
    new MultiheadAttention({ type: 'multiheadAttention', embedDim, numHeads, dropout, batchFirst }),
  linear: (inFeatures: number, outFeatures: number) => new Layer({ type: 'linear', inFeatures, outFeatures }),
  dropout: (p: number) => new FunctionalLayer({ type: 'dropout', p }),
  layerNorm: (features: number, eps: number) => new Layer({ type: 'layerNorm', normalizedShape: features, eps }),
};

function resolved(options: TransformerLayerOptions, owner: string): Required<TransformerLayerOptions> {
  const activation = options.activation ?? 'relu';
  if (activation !== 'relu' && activation !== 'gelu') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${owner}.activation: got ${JSON.stringify(activation)}, expected one of 'relu', 'gelu'`,
    );
  }
  return {
    dimFeedforward: options.dimFeedforward ?? 2048,
    dropout: options.dropout ?? 0.1,
    activation,
    layerNormEps: options.layerNormEps ?? 1e-5,
    batchFirst: options.batchFirst ?? false,
    normFirst: options.normFirst ?? false,
  };
}

const activate = (x: Tensor, activation: 'relu' | 'gelu'): Tensor => (activation === 'relu' ? F.relu(x) : F.gelu(x));

export interface EncoderMasks {
  /** [L, L] or [N * nhead, L, L]: true (or -inf) leaves a key out. */
  srcMask?: Tensor | null;
  /** [N, L]: true leaves a padded position out. */
  srcKeyPaddingMask?: Tensor | null;
  /** Leaves each position's later positions out. */
  isCausal?: boolean;
}

/** torch.nn.TransformerEncoderLayer: self-attention and a feed-forward block, each with a residual and LayerNorm. */
export class TransformerEncoderLayer extends Module {
  self_attn: MultiheadAttention;
  linear1: Layer;
  dropout: FunctionalLayer;
  linear2: Layer;
  norm1: Layer;
  norm2: Layer;
  dropout1: FunctionalLayer;
  dropout2: FunctionalLayer;
  declare private readonly settings: Required<TransformerLayerOptions>;

  constructor(dModel: number, nhead: number, options: TransformerLayerOptions = {}) {
    super();
    const settings = resolved(options, 'nn.transformerEncoderLayer');
    Object.defineProperty(this, 'settings', { value: settings, enumerable: false });
    this.self_attn = parts.attention(dModel, nhead, settings);
    this.linear1 = parts.linear(dModel, settings.dimFeedforward);
    this.dropout = parts.dropout(settings.dropout);
    this.linear2 = parts.linear(settings.dimFeedforward, dModel);
    this.norm1 = parts.layerNorm(dModel, settings.layerNormEps);
    this.norm2 = parts.layerNorm(dModel, settings.layerNormEps);
    this.dropout1 = parts.dropout(settings.dropout);
    this.dropout2 = parts.dropout(settings.dropout);
  }

  forward(src: Tensor, { srcMask = null, srcKeyPaddingMask = null, isCausal = false }: EncoderMasks = {}): Tensor {
    const attend = (x: Tensor) =>
      this.dropout1.forward(
        this.self_attn.forward(x, x, x, { attnMask: srcMask, keyPaddingMask: srcKeyPaddingMask, isCausal })[0],
      );
    const feedForward = (x: Tensor) =>
      this.dropout2.forward(
        this.linear2.forward(this.dropout.forward(activate(this.linear1.forward(x), this.settings.activation))),
      );
    if (this.settings.normFirst) {
      const x = src.add(attend(this.norm1.forward(src)));
      return x.add(feedForward(this.norm2.forward(x)));
    }
    const x = this.norm1.forward(src.add(attend(src)));
    return this.norm2.forward(x.add(feedForward(x)));
  }
}

export interface DecoderMasks {
  tgtMask?: Tensor | null;
  memoryMask?: Tensor | null;
  tgtKeyPaddingMask?: Tensor | null;
  memoryKeyPaddingMask?: Tensor | null;
  tgtIsCausal?: boolean;
  memoryIsCausal?: boolean;
}

/** torch.nn.TransformerDecoderLayer: self-attention, attention over the encoder's memory, and a feed-forward block. */
export class TransformerDecoderLayer extends Module {
  self_attn: MultiheadAttention;
  multihead_attn: MultiheadAttention;
  linear1: Layer;
  dropout: FunctionalLayer;
  linear2: Layer;
  norm1: Layer;
  norm2: Layer;
  norm3: Layer;
  dropout1: FunctionalLayer;
  dropout2: FunctionalLayer;
  dropout3: FunctionalLayer;
  declare private readonly settings: Required<TransformerLayerOptions>;

  constructor(dModel: number, nhead: number, options: TransformerLayerOptions = {}) {
    super();
    const settings = resolved(options, 'nn.transformerDecoderLayer');
    Object.defineProperty(this, 'settings', { value: settings, enumerable: false });
    this.self_attn = parts.attention(dModel, nhead, settings);
    this.multihead_attn = parts.attention(dModel, nhead, settings);
    this.linear1 = parts.linear(dModel, settings.dimFeedforward);
    this.dropout = parts.dropout(settings.dropout);
    this.linear2 = parts.linear(settings.dimFeedforward, dModel);
    this.norm1 = parts.layerNorm(dModel, settings.layerNormEps);
    this.norm2 = parts.layerNorm(dModel, settings.layerNormEps);
    this.norm3 = parts.layerNorm(dModel, settings.layerNormEps);
    this.dropout1 = parts.dropout(settings.dropout);
    this.dropout2 = parts.dropout(settings.dropout);
    this.dropout3 = parts.dropout(settings.dropout);
  }

  forward(
    tgt: Tensor,
    memory: Tensor,
    {
      tgtMask = null,
      memoryMask = null,
      tgtKeyPaddingMask = null,
      memoryKeyPaddingMask = null,
      tgtIsCausal = false,
      memoryIsCausal = false,
    }: DecoderMasks = {},
  ): Tensor {
    const selfAttend = (x: Tensor) =>
      this.dropout1.forward(
        this.self_attn.forward(x, x, x, {
          attnMask: tgtMask,
          keyPaddingMask: tgtKeyPaddingMask,
          isCausal: tgtIsCausal,
        })[0],
      );
    const crossAttend = (x: Tensor) =>
      this.dropout2.forward(
        this.multihead_attn.forward(x, memory, memory, {
          attnMask: memoryMask,
          keyPaddingMask: memoryKeyPaddingMask,
          isCausal: memoryIsCausal,
        })[0],
      );
    const feedForward = (x: Tensor) =>
      this.dropout3.forward(
        this.linear2.forward(this.dropout.forward(activate(this.linear1.forward(x), this.settings.activation))),
      );
    if (this.settings.normFirst) {
      let x = tgt.add(selfAttend(this.norm1.forward(tgt)));
      x = x.add(crossAttend(this.norm2.forward(x)));
      return x.add(feedForward(this.norm3.forward(x)));
    }
    let x = this.norm1.forward(tgt.add(selfAttend(tgt)));
    x = this.norm2.forward(x.add(crossAttend(x)));
    return this.norm3.forward(x.add(feedForward(x)));
  }
}

/** torch.nn.TransformerEncoder: numLayers copies of one encoder layer (the same initial weights), then an optional norm. */
export class TransformerEncoder extends Module {
  layers: ModuleList<TransformerEncoderLayer>;
  norm?: Layer;

  constructor(encoderLayer: TransformerEncoderLayer, numLayers: number, { norm }: { norm?: Layer } = {}) {
    super();
    if (!Number.isInteger(numLayers) || numLayers < 1) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `nn.transformerEncoder.numLayers: got ${numLayers}, expected an integer >= 1`,
      );
    }
    // PyTorch deep-copies the layer numLayers times and keeps none of it; the first copy can be the layer itself.
    this.layers = new ModuleList([
      encoderLayer,
      ...Array.from({ length: numLayers - 1 }, () => cloneModule(encoderLayer)),
    ]);
    if (norm) this.norm = norm;
  }

  forward(
    src: Tensor,
    {
      mask = null,
      srcKeyPaddingMask = null,
      isCausal = false,
    }: { mask?: Tensor | null; srcKeyPaddingMask?: Tensor | null; isCausal?: boolean } = {},
  ): Tensor {
    let output = src;
    for (const layer of this.layers) output = layer.forward(output, { srcMask: mask, srcKeyPaddingMask, isCausal });
    return this.norm ? this.norm.forward(output) : output;
  }
}
