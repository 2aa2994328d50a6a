// firebrand: train PyTorch models from Node.js; the loop runs in libtorch C++.
export { Dataset } from './data/dataset';
export type { SplitFractions } from './tables/split-fractions';
export type { DatasetSplit } from './data/dataset';
export type {
  ArrayDatasetSource,
  ArrayDtype,
  BatchOrderOptions,
  CsvOptions,
  DatasetFields,
  DatasetSplitOptions,
  SplitKey,
  IdxOptions,
  SampleWeightOptions,
} from './data/dataset-options';
export { transforms } from './data/transforms';
export { BatchLoader } from './data/batch-loader';
export type { DrainResult, LoaderOptions } from './data/batch-loader';
export { StreamingDataset } from './data/streaming-dataset';
export type { BatchSource, StreamingDatasetOptions } from './data/streaming-dataset';
export type { Dtype, TransformSpec } from './data/transforms';
export {
  Table,
  type ReadJsonlOptions,
  type ReadParquetOptions,
  type TableColumn,
  type TableRecord,
} from './tables/table';
export { imageTransforms, RANDOM_IMAGE_TRANSFORMS } from './images/image-transforms';
export type { ImageDtype, ImageTransformSpec, Interpolation, JitterRange } from './images/image-transforms';
export { decodeImage, readImage, type DecodeImageOptions } from './images/decode-image';
export { encodeJpeg, encodePng, writeImage } from './images/encode-image';
export { IMAGE_EXTENSIONS } from './images/image-folder';
export type { ImageCsvOptions, ImageDatasetOptions, ImageFile, ImageFolderOptions } from './images/image-datasets';
export { MAX_IMAGE_PIXELS, type ImagePipeline, type ImageReadMode } from './images/image-pipeline';
export type { TableSplitOptions } from './tables/table';
export { readCsv, PANDAS_NA_VALUES, type ReadCsvOptions } from './tables/read-csv';
export {
  TablePreprocessor,
  type CategoricalColumns,
  type DatetimeColumns,
  type NumericColumns,
  type SavedTablePreprocessor,
  type TablePreprocessorSpec,
  type TargetColumn,
} from './preprocessing/table-preprocessor';
export { datetimeSeconds, type DatetimePart } from './preprocessing/datetime-columns';
export type { FirebrandError, FirebrandErrorCode } from './errors';
export type {
  GenerateOptions,
  GenerationStep,
  ModelDescription,
  NumericArray,
  Prediction,
  TensorData,
  TensorFields,
  TokenFileOptions,
  TokenWindowOptions,
} from './native';
export { Model } from './inference/model';
export { ONNX_OPSETS, type ExampleInput, type ExampleShape, type ExportOnnxOptions } from './export/export-onnx';
export type { LabelOptions, ModelLoadOptions, PredictionInputs } from './inference/model';
export type { ClassLabel, ScoredLabel } from './inference/class-predictions';
export type { GenerationDefaults } from './inference/generation-defaults';
export type { EncodedImages, PredictionFields, PredictOptions } from './inference/prediction-inputs';
export { loadSafetensors, saveSafetensors } from './io/safetensors';
export type { SafetensorsContents } from './io/safetensors';
export { nn } from './nn/layers';
export type * from './nn/layer-specs';
export type * from './nn/model-spec';
export {
  Buffer,
  BuiltinLayer,
  Layer,
  Module,
  ModuleDict,
  ModuleList,
  Parameter,
  Sequential,
  type ModuleDtype,
} from './nn/module/module';
export { FunctionalLayer } from './nn/module/functional-layers';
export type { FunctionalLayerSpec, FunctionalLayerType } from './nn/module/functional-layers';
export { GRU, LSTM, RNN } from './nn/module/recurrent';
export type { RecurrentOptions } from './nn/module/recurrent';
export { MultiheadAttention } from './nn/module/attention';
export type { AttentionOptions } from './nn/module/attention';
export { applyRotaryPosEmb, RotaryEmbedding, rotateHalf } from './nn/module/rotary';
export type { RotaryEmbeddingOptions } from './nn/module/rotary';
export { TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer } from './nn/module/transformer';
export type { DecoderMasks, EncoderMasks, TransformerLayerOptions } from './nn/module/transformer';
export type { BufferOptions, ForwardOutput, ParameterOptions } from './nn/module/module';
export { F, torch } from './nn/module/functional';
export { SymInt, Tensor } from './nn/module/tensor';
export type { Dim, DtypeName, SizeArg } from './nn/module/tensor';
export type { GraphModelSpec, ModuleNode } from './nn/module/tracer';
export type { FanMode, Nonlinearity } from './nn/module/init';
export type { SummaryOptions } from './nn/module/summary';
export { EarlyStopping } from './callbacks/early-stopping';
export type { EarlyStoppingOptions } from './callbacks/early-stopping';
export { ModelCheckpoint } from './callbacks/model-checkpoint';
export type { ModelCheckpointOptions } from './callbacks/model-checkpoint';
export type { MonitorMode } from './callbacks/monitored-metric';
export { LearningRateMonitor } from './callbacks/learning-rate-monitor';
export type { LearningRateMonitorOptions } from './callbacks/learning-rate-monitor';
export { Timer } from './callbacks/timer';
export type { TimerDuration, TimerOptions, TimerStage } from './callbacks/timer';
export { CsvLogger } from './logging/csv-logger';
export { JsonLinesLogger } from './logging/jsonl-logger';
export type { Logger, ScalarMetrics } from './logging/logger';
export { TensorBoardLogger } from './logging/tensorboard/tensorboard-logger';
export { ProgressBar } from './progress/progress-bar';
export { writeReport, type ReportOptions } from './report/write-report';
export type { ProgressBarOptions, ProgressStream } from './progress/progress-bar';
export { manualSeed, runtimeInfo, setNumThreads, useDeterministicAlgorithms } from './runtime';
export type { RuntimeInfo } from './runtime';
export type {
  BatchInfo,
  BatchResult,
  Callback,
  CheckpointInfo,
  TfLogs,
  TrainBeginInfo,
  TrainerView,
  ValidationInfo,
} from './training/callbacks';
export { defaultConfig, loadConfig } from './training/config';
export type { DistributedConfig, GradScalerConfig, TrainerConfig } from './training/config';
export type {
  BestMetric,
  EpochLogs,
  EpochSummary,
  EvalLogs,
  EvalProgress,
  History,
  StepLogs,
  ValidationLogs,
} from './training/logs';
export type { ClassificationReport, MetricLogs, MetricName, ScalarMetricName, ValMetricLogs } from './training/metrics';
export type {
  LossName,
  ClassWeights,
  LossSpec,
  NamedOptimizer,
  OptimizerGroupOptions,
  OptimizerName,
  OptimizerSpec,
  ParamGroup,
  SchedulerName,
  SchedulerSpec,
} from './training/objectives';
export { Trainer } from './training/trainer';
export type { CollectiveValues, RankCollectives } from './distributed/rank-collectives';
export { fromPretrained } from './pretrained/from-pretrained';
export { datasetSplits } from './pretrained/dataset-splits';
export type { FromPretrainedOptions, PretrainedConfig } from './pretrained/from-pretrained';
export { loadPretrainedModel } from './serving/pretrained-model';
export type { LoadPretrainedOptions } from './serving/pretrained-model';
export { Conv1D, GPT2Attention, GPT2Block, GPT2LMHeadModel, GPT2MLP, GPT2Model } from './pretrained/architectures/gpt2';
export type { GPT2Config } from './pretrained/architectures/gpt2';
export {
  LlamaAttention,
  LlamaDecoderLayer,
  LlamaForCausalLM,
  LlamaMLP,
  LlamaModel,
} from './pretrained/architectures/llama';
export type { CausalLMOptions, LlamaConfig } from './pretrained/architectures/llama';
export {
  BertAttention,
  BertEmbeddings,
  BertEncoder,
  BertForMaskedLM,
  BertForSequenceClassification,
  BertIntermediate,
  BertLayer,
  BertLMPredictionHead,
  BertModel,
  BertOnlyMLMHead,
  BertPooler,
  BertPredictionHeadTransform,
  BertResidualOutput,
  BertSelfAttention,
} from './pretrained/architectures/bert';
export type { BertConfig } from './pretrained/architectures/bert';
export { DenseActivation, EncoderSelfAttention } from './pretrained/architectures/encoder-blocks';
export type { EncoderConfig } from './pretrained/architectures/encoder-blocks';
export {
  ViTAttention,
  ViTEmbeddings,
  ViTEncoder,
  ViTForImageClassification,
  ViTIntermediate,
  ViTLayer,
  ViTModel,
  ViTPatchEmbeddings,
  ViTSelfAttention,
  ViTSelfOutput,
} from './pretrained/architectures/vit';
export type { ViTConfig } from './pretrained/architectures/vit';
export { torchvision } from './pretrained/torchvision-models';
export type { WeightsOption } from './pretrained/torchvision-models';
export { BasicBlock, Bottleneck, ResNet } from './pretrained/architectures/torchvision-resnet';
export type { ResNetOptions } from './pretrained/architectures/torchvision-resnet';
export { InvertedResidual, MobileNetV3, SqueezeExcitation } from './pretrained/architectures/torchvision-mobilenetv3';
export type { MobileNetV3Options } from './pretrained/architectures/torchvision-mobilenetv3';
export type { InitWeightsOptions, WeightNameMap } from './training/weight-renames';
export type { LoraConfig } from './training/lora';
export type {
  DataloaderConfiguration,
  ModelConfiguration,
  OptimizerConfiguration,
  TrainerOptions,
} from './training/trainer-options';
export type { EvaluateOptions, FitOptions, TrainingData } from './training/fit-options';
export type { TrainerState } from './training/checkpoints';
export { ByteTokenizer } from './text/byte-tokenizer';
export { CharTokenizer } from './text/char-tokenizer';
export { HuggingFaceTokenizer } from './text/huggingface-tokenizer';
export type {
  ChatMessage,
  ChatContentPart,
  ChatTemplateOptions,
  ChatTokens,
  DecodeOptions,
  EncodeOptions,
  SpecialTokens,
} from './text/huggingface-tokenizer';
export type { SftOptions, SftRow } from './text/sft-rows';
export { GeneratedText, StopStrings, TextStreamer } from './text/text-streamer';
export type { FinishReason } from './text/text-streamer';
export { serve } from './serving/openai-server';
export type { ModelServer } from './serving/openai-server';
export type { ServeOptions } from './serving/serve-options';
export type { GenerateTextOptions } from './inference/generation';
export type { Tokenizer } from './text/tokenizer';
