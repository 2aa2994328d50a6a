// torchvision's MobileNetV3 (torchvision.models.mobilenet_v3_large/small) under
// its module names (features.N.block.M.{0,1}, features.N.block.M.fc1/fc2,
// classifier.{0,3}), so its state dicts load as they are, with its initialization.
import { nn } from '../../nn/layers';
import { F } from '../../nn/module/functional';
import type { FunctionalLayer } from '../../nn/module/functional-layers';
import type { Layer, Module, Sequential } from '../../nn/module/module';
import type { Tensor } from '../../nn/module/tensor';

/** torchvision's _make_divisible: channels rounded to a multiple of 8, never below 90% of the request. */
function makeDivisible(value: number, divisor = 8): number {
  const rounded = Math.max(divisor, Math.floor((value + divisor / 2) / divisor) * divisor);
  return rounded < 0.9 * value ? rounded + divisor : rounded;
}

type Activation = 'RE' | 'HS';
/** One inverted residual: input, kernel, expanded, output channels, squeeze-excitation, activation, stride. */
type BlockRow = [number, number, number, number, boolean, Activation, number];

const LARGE: BlockRow[] = [
  [16, 3, 16, 16, false, 'RE', 1],
  [16, 3, 64, 24, false, 'RE', 2],
  [24, 3, 72, 24, false, 'RE', 1],
  [24, 5, 72, 40, true, 'RE', 2],
  [40, 5, 120, 40, true, 'RE', 1],
  [40, 5, 120, 40, true, 'RE', 1],
  [40, 3, 240, 80, false, 'HS', 2],
  [80, 3, 200, 80, false, 'HS', 1],
  [80, 3, 184, 80, false, 'HS', 1],
  [80, 3, 184, 80, false, 'HS', 1],
  [80, 3, 480, 112, true, 'HS', 1],
  [112, 3, 672, 112, true, 'HS', 1],
  [112, 5, 672, 160, true, 'HS', 2],
  [160, 5, 960, 160, true, 'HS', 1],
  [160, 5, 960, 160, true, 'HS', 1],
];
const SMALL: BlockRow[] = [
  [16, 3, 16, 16, true, 'RE', 2],
  [16, 3, 72, 24, false, 'RE', 2],
  [24, 3, 88, 24, false, 'RE', 1],
  [24, 5, 96, 40, true, 'HS', 2],
  [40, 5, 240, 40, true, 'HS', 1],
  [40, 5, 240, 40, true, 'HS', 1],
  [40, 5, 120, 48, true, 'HS', 1],
  [48, 5, 144, 48, true, 'HS', 1],
  [48, 5, 288, 96, true, 'HS', 2],
  [96, 5, 576, 96, true, 'HS', 1],
  [96, 5, 576, 96, true, 'HS', 1],
];

const activation = (kind: Activation | 'none'): Module[] =>
  kind === 'none' ? [] : [kind === 'HS' ? nn.hardswish() : nn.relu()];

/** torchvision's Conv2dNormActivation: convolution (no bias), BatchNorm (eps 1e-3, momentum 0.01), activation. */
function convNormActivation(
  inChannels: number,
  outChannels: number,
  kernel: number,
  kind: Activation | 'none',
  { stride = 1, groups = 1 }: { stride?: number; groups?: number } = {},
): Sequential {
  const conv = nn.conv2d(inChannels, outChannels, kernel, {
    stride,
    padding: (kernel - 1) / 2,
    groups,
    bias: false,
  });
  nn.init.kaimingNormal_(conv.weight, { mode: 'fan_out' });
  return nn.sequential(conv, nn.batchNorm2d(outChannels, { eps: 0.001, momentum: 0.01 }), ...activation(kind));
}

/** torchvision's SqueezeExcitation with a hardsigmoid scale. */
export class SqueezeExcitation extends nn.Module {
  avgpool: FunctionalLayer;
  fc1: Layer;
  fc2: Layer;

  constructor(channels: number, squeezeChannels: number) {
    super();
    this.avgpool = nn.adaptiveAvgPool2d(1);
    this.fc1 = nn.conv2d(channels, squeezeChannels, 1);
    this.fc2 = nn.conv2d(squeezeChannels, channels, 1);
    for (const fc of [this.fc1, this.fc2]) {
      nn.init.kaimingNormal_(fc.weight, { mode: 'fan_out' });
      nn.init.zeros_(fc.bias);
    }
  }

  forward(x: Tensor): Tensor {
    const scale = this.fc2.forward(this.fc1.forward(this.avgpool.forward(x)).relu());
    return x.mul(F.hardsigmoid(scale));
  }
}

export class InvertedResidual extends nn.Module {
  block: Sequential;
  private readonly residual: boolean;

  constructor([input, kernel, expanded, output, squeeze, kind, stride]: BlockRow) {
    super();
    this.residual = stride === 1 && input === output;
    const layers: Module[] = [];
    if (expanded !== input) layers.push(convNormActivation(input, expanded, 1, kind));
    layers.push(convNormActivation(expanded, expanded, kernel, kind, { stride, groups: expanded }));
    if (squeeze) layers.push(new SqueezeExcitation(expanded, makeDivisible(Math.floor(expanded / 4))));
    layers.push(convNormActivation(expanded, output, 1, 'none'));
    this.block = nn.sequential(...layers);
  }

  forward(x: Tensor): Tensor {
    const result = this.block.forward(x);
    return this.residual ? result.add(x) : result;
  }
}

export interface MobileNetV3Options {
  /** Classes of the last classifier layer (default 1000). */
  numClasses?: number;
  /** Channel multiplier (default 1). */
  widthMult?: number;
  /** Dropout before the last layer (default 0.2). */
  dropout?: number;
}

/** torchvision.models.MobileNetV3: logits [batch, numClasses] for images [batch, 3, height, width]. */
export class MobileNetV3 extends nn.Module {
  features: Sequential;
  avgpool: FunctionalLayer;
  classifier: Sequential;

  constructor(arch: 'large' | 'small', { numClasses = 1000, widthMult = 1, dropout = 0.2 }: MobileNetV3Options = {}) {
    super();
    const adjust = (channels: number) => makeDivisible(channels * widthMult);
    const rows = (arch === 'large' ? LARGE : SMALL).map(([input, kernel, expanded, output, ...rest]): BlockRow => [
      adjust(input),
      kernel,
      adjust(expanded),
      adjust(output),
      ...rest,
    ]);
    const lastInput = rows[rows.length - 1][3];
    const lastChannel = adjust(arch === 'large' ? 1280 : 1024);
    this.features = nn.sequential(
      convNormActivation(3, rows[0][0], 3, 'HS', { stride: 2 }),
      ...rows.map((row) => new InvertedResidual(row)),
      convNormActivation(lastInput, 6 * lastInput, 1, 'HS'),
    );
    this.avgpool = nn.adaptiveAvgPool2d(1);
    const hidden = nn.linear(6 * lastInput, lastChannel);
    const head = nn.linear(lastChannel, numClasses);
    for (const linear of [hidden, head]) {
      nn.init.normal_(linear.weight, { std: 0.01 });
      nn.init.zeros_(linear.bias);
    }
    this.classifier = nn.sequential(hidden, nn.hardswish(), nn.dropout(dropout), head);
  }

  forward(x: Tensor): Tensor {
    return this.classifier.forward(this.avgpool.forward(this.features.forward(x)).flatten(1));
  }
}
