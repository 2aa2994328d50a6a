// ViT as transformers writes it (ViTForImageClassification): patches embedded
// by a strided convolution, a [CLS] token and learned positions, pre-norm
// encoder layers, and a classifier on the [CLS] state, under the module names
// checkpoints hold (vit.encoder.layer.N.attention.attention.query, ...).
import { firebrandError } from '../../errors';
import type { Conv2dSpec, LinearSpec } from '../../nn/layer-specs';
import { nn } from '../../nn/layers';
import { torch } from '../../nn/module/functional';
import type { FunctionalLayer } from '../../nn/module/functional-layers';
import type { Layer, ModuleList, Parameter } from '../../nn/module/module';
import type { Tensor } from '../../nn/module/tensor';
import { DenseActivation, type EncoderConfig, EncoderSelfAttention } from './encoder-blocks';

/** config.json's fields ViT reads (transformers' ViTConfig names). */
export interface ViTConfig extends EncoderConfig {
  image_size: number;
  patch_size: number;
  num_channels?: number;
  qkv_bias?: boolean;
}

export class ViTPatchEmbeddings extends nn.Module {
  projection: Layer<Conv2dSpec>;

  constructor(config: ViTConfig) {
    super();
    const { patch_size: patch } = config;
    this.projection = nn.conv2d(config.num_channels ?? 3, config.hidden_size, patch, { stride: patch });
  }

  /** pixels [batch, channels, height, width] -> [batch, patches, hidden]. */
  forward(pixels: Tensor): Tensor {
    return this.projection.forward(pixels).flatten(2).transpose(1, 2);
  }
}

export class ViTEmbeddings extends nn.Module {
  cls_token: Parameter;
  patch_embeddings: ViTPatchEmbeddings;
  position_embeddings: Parameter;
  dropout: FunctionalLayer;

  constructor(config: ViTConfig) {
    super();
    const patches = Math.floor(config.image_size / config.patch_size) ** 2;
    this.cls_token = new nn.Parameter([1, 1, config.hidden_size]);
    this.patch_embeddings = new ViTPatchEmbeddings(config);
    this.position_embeddings = new nn.Parameter([1, patches + 1, config.hidden_size]);
    nn.init.truncNormal_(this.cls_token, { std: 0.02 });
    nn.init.truncNormal_(this.position_embeddings, { std: 0.02 });
    this.dropout = nn.dropout(config.hidden_dropout_prob ?? 0);
  }

  forward(pixels: Tensor): Tensor {
    const patches = this.patch_embeddings.forward(pixels);
    const cls = this.cls_token.expand(patches.size(0), -1, -1);
    return this.dropout.forward(torch.cat([cls, patches], 1).add(this.position_embeddings));
  }
}

/** ViT's self-attention (query, key, value; their biases as qkv_bias says). */
export class ViTSelfAttention extends EncoderSelfAttention {
  constructor(config: ViTConfig) {
    super(
      { ...config, attention_probs_dropout_prob: config.attention_probs_dropout_prob ?? 0 },
      config.qkv_bias ?? true,
    );
  }
}

/** A sublayer's output projection and dropout (the residual is added by ViTLayer, or by ViTOutput). */
export class ViTSelfOutput extends nn.Module {
  dense: Layer<LinearSpec>;
  dropout: FunctionalLayer;

  constructor(inputSize: number, config: ViTConfig) {
    super();
    this.dense = nn.linear(inputSize, config.hidden_size);
    this.dropout = nn.dropout(config.hidden_dropout_prob ?? 0);
  }

  forward(x: Tensor): Tensor {
    return this.dropout.forward(this.dense.forward(x));
  }
}

export class ViTAttention extends nn.Module {
  attention: ViTSelfAttention;
  output: ViTSelfOutput;

  constructor(config: ViTConfig) {
    super();
    this.attention = new ViTSelfAttention(config);
    this.output = new ViTSelfOutput(config.hidden_size, config);
  }

  forward(x: Tensor): Tensor {
    return this.output.forward(this.attention.forward(x));
  }
}

export class ViTIntermediate extends DenseActivation {}

export class ViTLayer extends nn.Module {
  attention: ViTAttention;
  intermediate: ViTIntermediate;
  output: ViTSelfOutput;
  layernorm_before: Layer;
  layernorm_after: Layer;

  constructor(config: ViTConfig) {
    super();
    const eps = config.layer_norm_eps ?? 1e-12;
    this.attention = new ViTAttention(config);
    this.intermediate = new ViTIntermediate(config);
    this.output = new ViTSelfOutput(config.intermediate_size, config);
    this.layernorm_before = nn.layerNorm(config.hidden_size, { eps });
    this.layernorm_after = nn.layerNorm(config.hidden_size, { eps });
  }

  forward(x: Tensor): Tensor {
    const h = this.attention.forward(this.layernorm_before.forward(x)).add(x);
    return this.output.forward(this.intermediate.forward(this.layernorm_after.forward(h))).add(h);
  }
}

export class ViTEncoder extends nn.Module {
  layer: ModuleList<ViTLayer>;

  constructor(config: ViTConfig) {
    super();
    this.layer = nn.moduleList(Array.from({ length: config.num_hidden_layers }, () => new ViTLayer(config)));
  }

  forward(x: Tensor): Tensor {
    for (const layer of this.layer) x = layer.forward(x);
    return x;
  }
}

/** ViTModel without its pooler: the final states [batch, 1 + patches, hidden], layer-normed. */
export class ViTModel extends nn.Module {
  embeddings: ViTEmbeddings;
  encoder: ViTEncoder;
  layernorm: Layer;

  constructor(config: ViTConfig) {
    super();
    if (config.hidden_size % config.num_attention_heads !== 0) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `config.json: hidden_size ${config.hidden_size} is not a multiple of num_attention_heads ${config.num_attention_heads}`,
      );
    }
    this.embeddings = new ViTEmbeddings(config);
    this.encoder = new ViTEncoder(config);
    this.layernorm = nn.layerNorm(config.hidden_size, { eps: config.layer_norm_eps ?? 1e-12 });
  }

  forward(pixels: Tensor): Tensor {
    return this.layernorm.forward(this.encoder.forward(this.embeddings.forward(pixels)));
  }
}

/** ViTForImageClassification: logits [batch, num_labels] from the [CLS] state; pixels [batch, 3, size, size]. */
export class ViTForImageClassification extends nn.Module {
  vit: ViTModel;
  classifier: Layer<LinearSpec>;

  constructor(readonly config: ViTConfig) {
    super();
    this.vit = new ViTModel(config);
    this.classifier = nn.linear(config.hidden_size, Object.keys(config.id2label ?? { 0: '', 1: '' }).length);
  }

  forward(pixels: Tensor): Tensor {
    return this.classifier.forward(this.vit.forward(pixels).select(1, 0));
  }
}
