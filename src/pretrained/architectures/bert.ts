// BERT as transformers writes it (BertForMaskedLM, BertForSequenceClassification):
// word, position and token-type embeddings, post-norm encoder layers, and the
// attention mask that leaves padding out, under transformers' module names.
// Both heads take the tokenizer's three fields by name (inputFields), so a
// batch or predict gives { input_ids, attention_mask, token_type_ids }.
import { firebrandError } from '../../errors';
import type { LinearSpec } from '../../nn/layer-specs';
import { nn } from '../../nn/layers';
import { torch } from '../../nn/module/functional';
import type { FunctionalLayer } from '../../nn/module/functional-layers';
import type { Layer, ModuleList, Parameter } from '../../nn/module/module';
import type { Tensor } from '../../nn/module/tensor';
import { DenseActivation, type EncoderConfig, EncoderSelfAttention } from './encoder-blocks';
import { hiddenActivation } from './hidden-activation';

/** config.json's fields BERT reads (transformers' BertConfig names). */
export interface BertConfig extends EncoderConfig {
  vocab_size: number;
  max_position_embeddings?: number;
  type_vocab_size?: number;
  pad_token_id?: number | null;
  position_embedding_type?: string;
  is_decoder?: boolean;
  classifier_dropout?: number | null;
}

/** The fields both heads take, in forward's order: what a BERT tokenizer gives. */
export const BERT_INPUT_FIELDS = ['input_ids', 'attention_mask', 'token_type_ids'];

function checkSupported(config: BertConfig): void {
  const unsupported = [
    (config.position_embedding_type ?? 'absolute') !== 'absolute' &&
      `position_embedding_type '${config.position_embedding_type}' (supported: 'absolute')`,
    config.is_decoder === true && 'is_decoder (BERT as a decoder)',
    config.hidden_size % config.num_attention_heads !== 0 &&
      `hidden_size ${config.hidden_size} that num_attention_heads ${config.num_attention_heads} does not divide`,
  ].filter((problem): problem is string => typeof problem === 'string');
  if (unsupported.length > 0) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `config.json: ${unsupported.join('; ')} is not supported`);
  }
}

export class BertEmbeddings extends nn.Module {
  word_embeddings: Layer;
  position_embeddings: Layer;
  token_type_embeddings: Layer;
  LayerNorm: Layer;
  dropout: FunctionalLayer;

  constructor(config: BertConfig) {
    super();
    const padding = config.pad_token_id ?? 0;
    this.word_embeddings = nn.embedding(config.vocab_size, config.hidden_size, { paddingIdx: padding });
    this.position_embeddings = nn.embedding(config.max_position_embeddings ?? 512, config.hidden_size);
    this.token_type_embeddings = nn.embedding(config.type_vocab_size ?? 2, config.hidden_size);
    this.LayerNorm = nn.layerNorm(config.hidden_size, { eps: config.layer_norm_eps ?? 1e-12 });
    this.dropout = nn.dropout(config.hidden_dropout_prob ?? 0.1);
  }

  forward(inputIds: Tensor, tokenTypeIds: Tensor): Tensor {
    const positions = torch.arange(inputIds.size(1));
    const embeddings = this.word_embeddings
      .forward(inputIds)
      .add(this.token_type_embeddings.forward(tokenTypeIds))
      .add(this.position_embeddings.forward(positions));
    return this.dropout.forward(this.LayerNorm.forward(embeddings));
  }
}

/** BERT's self-attention (query, key, value) with the mask of its padding. */
export class BertSelfAttention extends EncoderSelfAttention {}

/** A sublayer's output: dense, dropout, then LayerNorm over it plus the sublayer's input (post-norm). */
export class BertResidualOutput extends nn.Module {
  dense: Layer<LinearSpec>;
  LayerNorm: Layer;
  dropout: FunctionalLayer;

  constructor(inputSize: number, config: BertConfig) {
    super();
    this.dense = nn.linear(inputSize, config.hidden_size);
    this.LayerNorm = nn.layerNorm(config.hidden_size, { eps: config.layer_norm_eps ?? 1e-12 });
    this.dropout = nn.dropout(config.hidden_dropout_prob ?? 0.1);
  }

  forward(x: Tensor, residual: Tensor): Tensor {
    return this.LayerNorm.forward(this.dropout.forward(this.dense.forward(x)).add(residual));
  }
}

export class BertAttention extends nn.Module {
  self: BertSelfAttention;
  output: BertResidualOutput;

  constructor(config: BertConfig) {
    super();
    this.self = new BertSelfAttention(config);
    this.output = new BertResidualOutput(config.hidden_size, config);
  }

  forward(x: Tensor, keep: Tensor): Tensor {
    return this.output.forward(this.self.forward(x, keep), x);
  }
}

export class BertIntermediate extends DenseActivation {}

export class BertLayer extends nn.Module {
  attention: BertAttention;
  intermediate: BertIntermediate;
  output: BertResidualOutput;

  constructor(config: BertConfig) {
    super();
    this.attention = new BertAttention(config);
    this.intermediate = new BertIntermediate(config);
    this.output = new BertResidualOutput(config.intermediate_size, config);
  }

  forward(x: Tensor, keep: Tensor): Tensor {
    const attended = this.attention.forward(x, keep);
    return this.output.forward(this.intermediate.forward(attended), attended);
  }
}

export class BertEncoder extends nn.Module {
  layer: ModuleList<BertLayer>;

  constructor(config: BertConfig) {
    super();
    this.layer = nn.moduleList(Array.from({ length: config.num_hidden_layers }, () => new BertLayer(config)));
  }

  forward(x: Tensor, keep: Tensor): Tensor {
    for (const layer of this.layer) x = layer.forward(x, keep);
    return x;
  }
}

export class BertPooler extends nn.Module {
  dense: Layer<LinearSpec>;

  constructor(config: BertConfig) {
    super();
    this.dense = nn.linear(config.hidden_size, config.hidden_size);
  }

  /** The first ([CLS]) token's state, through dense and tanh. */
  forward(x: Tensor): Tensor {
    return this.dense.forward(x.select(1, 0)).tanh();
  }
}

/** BertModel: the encoder's states [batch, time, hidden] and, with a pooler, the pooled [CLS] state. */
export class BertModel extends nn.Module {
  embeddings: BertEmbeddings;
  encoder: BertEncoder;
  pooler?: BertPooler;

  constructor(config: BertConfig, { addPoolingLayer = true }: { addPoolingLayer?: boolean } = {}) {
    super();
    checkSupported(config);
    this.embeddings = new BertEmbeddings(config);
    this.encoder = new BertEncoder(config);
    if (addPoolingLayer) this.pooler = new BertPooler(config);
  }

  /** attentionMask: [batch, time], 1 for tokens and 0 for padding, as the tokenizer gives it. */
  forward(inputIds: Tensor, attentionMask: Tensor, tokenTypeIds: Tensor): Tensor {
    const keep = attentionMask.ne(0).unsqueeze(1).unsqueeze(1);
    return this.encoder.forward(this.embeddings.forward(inputIds, tokenTypeIds), keep);
  }
}

export class BertPredictionHeadTransform extends nn.Module {
  dense: Layer<LinearSpec>;
  LayerNorm: Layer;
  private readonly activation: (x: Tensor) => Tensor;

  constructor(config: BertConfig) {
    super();
    this.dense = nn.linear(config.hidden_size, config.hidden_size);
    this.activation = hiddenActivation(config.hidden_act ?? 'gelu');
    this.LayerNorm = nn.layerNorm(config.hidden_size, { eps: config.layer_norm_eps ?? 1e-12 });
  }

  forward(x: Tensor): Tensor {
    return this.LayerNorm.forward(this.activation(this.dense.forward(x)));
  }
}

/** The masked-LM head: transform, then a decoder tied to the word embeddings, whose bias is `bias`. */
export class BertLMPredictionHead extends nn.Module {
  transform: BertPredictionHeadTransform;
  decoder: Layer<LinearSpec>;
  bias: Parameter;

  constructor(config: BertConfig) {
    super();
    this.transform = new BertPredictionHeadTransform(config);
    this.decoder = nn.linear(config.hidden_size, config.vocab_size);
    this.bias = new nn.Parameter([config.vocab_size]);
    nn.init.zeros_(this.bias);
    this.decoder.bias = this.bias;
  }

  forward(x: Tensor): Tensor {
    return this.decoder.forward(this.transform.forward(x));
  }
}

export class BertOnlyMLMHead extends nn.Module {
  predictions: BertLMPredictionHead;

  constructor(config: BertConfig) {
    super();
    this.predictions = new BertLMPredictionHead(config);
  }

  forward(x: Tensor): Tensor {
    return this.predictions.forward(x);
  }
}

/** BertForMaskedLM: logits [batch, vocabulary, time] (cross_entropy's layout; -100 targets are ignored). */
export class BertForMaskedLM extends nn.Module {
  bert: BertModel;
  cls: BertOnlyMLMHead;

  constructor(readonly config: BertConfig) {
    super();
    this.bert = new BertModel(config, { addPoolingLayer: false });
    this.cls = new BertOnlyMLMHead(config);
    this.cls.predictions.decoder.weight = this.bert.embeddings.word_embeddings.weight;
  }

  /** The output layer (transformers' get_output_embeddings): what LoRA's 'all-linear' leaves out. */
  getOutputEmbeddings(): Layer<LinearSpec> {
    return this.cls.predictions.decoder;
  }

  override inputFields(): string[] {
    return BERT_INPUT_FIELDS;
  }

  forward(inputIds: Tensor, attentionMask: Tensor, tokenTypeIds: Tensor): Tensor {
    return this.cls.forward(this.bert.forward(inputIds, attentionMask, tokenTypeIds)).transpose(1, 2);
  }
}

/**
 * BertForSequenceClassification: logits [batch, num_labels] from the pooled [CLS] state (cross_entropy
 * for classes as problem_type single_label_classification, mse for regression).
 */
export class BertForSequenceClassification extends nn.Module {
  bert: BertModel;
  dropout: FunctionalLayer;
  classifier: Layer<LinearSpec>;

  constructor(readonly config: BertConfig) {
    super();
    this.bert = new BertModel(config);
    this.dropout = nn.dropout(config.classifier_dropout ?? config.hidden_dropout_prob ?? 0.1);
    this.classifier = nn.linear(config.hidden_size, Object.keys(config.id2label ?? { 0: '', 1: '' }).length);
  }

  override inputFields(): string[] {
    return BERT_INPUT_FIELDS;
  }

  forward(inputIds: Tensor, attentionMask: Tensor, tokenTypeIds: Tensor): Tensor {
    const states = this.bert.forward(inputIds, attentionMask, tokenTypeIds);
    return this.classifier.forward(this.dropout.forward(this.bert.pooler!.forward(states)));
  }
}
