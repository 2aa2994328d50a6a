// torchvision's ResNet (torchvision.models.resnet18/34/50/101/152) under its
// module names (conv1, bn1, layerK.N.{conv1, bn1, ..., downsample.0/1}, fc),
// so its state dicts load as they are, with its initialization.
import type { BatchNormSpec, Conv2dSpec, LinearSpec } from '../../nn/layer-specs';
import { nn } from '../../nn/layers';
import type { FunctionalLayer } from '../../nn/module/functional-layers';
import type { Layer, Module, Sequential } from '../../nn/module/module';
import type { Tensor } from '../../nn/module/tensor';

/** A 3x3 or 1x1 convolution without bias, initialized as torchvision does (kaiming normal, fan_out, relu). */
function conv(inChannels: number, outChannels: number, kernel: 1 | 3, stride = 1, groups = 1): Layer<Conv2dSpec> {
  const layer = nn.conv2d(inChannels, outChannels, kernel, {
    stride,
    padding: kernel === 3 ? 1 : 0,
    groups,
    bias: false,
  });
  nn.init.kaimingNormal_(layer.weight, { mode: 'fan_out', nonlinearity: 'relu' });
  return layer;
}

function batchNorm(channels: number): Layer<BatchNormSpec> {
  return nn.batchNorm2d(channels);
}

export interface ResNetBlock extends Module {
  forward(x: Tensor): Tensor;
}

export class BasicBlock extends nn.Module implements ResNetBlock {
  static readonly expansion = 1;
  conv1: Layer<Conv2dSpec>;
  bn1: Layer<BatchNormSpec>;
  conv2: Layer<Conv2dSpec>;
  bn2: Layer<BatchNormSpec>;
  downsample?: Sequential;

  constructor(inplanes: number, planes: number, stride: number, downsample?: Sequential) {
    super();
    this.conv1 = conv(inplanes, planes, 3, stride);
    this.bn1 = batchNorm(planes);
    this.conv2 = conv(planes, planes, 3);
    this.bn2 = batchNorm(planes);
    this.downsample = downsample;
  }

  forward(x: Tensor): Tensor {
    const out = this.bn2.forward(this.conv2.forward(this.bn1.forward(this.conv1.forward(x)).relu()));
    return out.add(this.downsample?.forward(x) ?? x).relu();
  }
}

export class Bottleneck extends nn.Module implements ResNetBlock {
  static readonly expansion = 4;
  conv1: Layer<Conv2dSpec>;
  bn1: Layer<BatchNormSpec>;
  conv2: Layer<Conv2dSpec>;
  bn2: Layer<BatchNormSpec>;
  conv3: Layer<Conv2dSpec>;
  bn3: Layer<BatchNormSpec>;
  downsample?: Sequential;

  constructor(inplanes: number, planes: number, stride: number, downsample?: Sequential) {
    super();
    this.conv1 = conv(inplanes, planes, 1);
    this.bn1 = batchNorm(planes);
    this.conv2 = conv(planes, planes, 3, stride);
    this.bn2 = batchNorm(planes);
    this.conv3 = conv(planes, planes * Bottleneck.expansion, 1);
    this.bn3 = batchNorm(planes * Bottleneck.expansion);
    this.downsample = downsample;
  }

  forward(x: Tensor): Tensor {
    let out = this.bn1.forward(this.conv1.forward(x)).relu();
    out = this.bn2.forward(this.conv2.forward(out)).relu();
    out = this.bn3.forward(this.conv3.forward(out));
    return out.add(this.downsample?.forward(x) ?? x).relu();
  }
}

type BlockClass = (typeof BasicBlock | typeof Bottleneck) & { expansion: number };

export interface ResNetOptions {
  /** Classes of the fc head (default 1000, ImageNet's). */
  numClasses?: number;
}

/** torchvision.models.ResNet: logits [batch, numClasses] for images [batch, 3, height, width]. */
export class ResNet extends nn.Module {
  conv1: Layer<Conv2dSpec>;
  bn1: Layer<BatchNormSpec>;
  maxpool: FunctionalLayer;
  layer1: Sequential;
  layer2: Sequential;
  layer3: Sequential;
  layer4: Sequential;
  avgpool: FunctionalLayer;
  fc: Layer<LinearSpec>;
  private inplanes = 64;

  constructor(block: BlockClass, layers: [number, number, number, number], { numClasses = 1000 }: ResNetOptions = {}) {
    super();
    this.conv1 = nn.conv2d(3, 64, 7, { stride: 2, padding: 3, bias: false });
    nn.init.kaimingNormal_(this.conv1.weight, { mode: 'fan_out', nonlinearity: 'relu' });
    this.bn1 = batchNorm(64);
    this.maxpool = nn.maxPool2d(3, { stride: 2, padding: 1 });
    this.layer1 = this.makeLayer(block, 64, layers[0], 1);
    this.layer2 = this.makeLayer(block, 128, layers[1], 2);
    this.layer3 = this.makeLayer(block, 256, layers[2], 2);
    this.layer4 = this.makeLayer(block, 512, layers[3], 2);
    this.avgpool = nn.adaptiveAvgPool2d([1, 1]);
    this.fc = nn.linear(512 * block.expansion, numClasses);
  }

  private makeLayer(block: BlockClass, planes: number, blocks: number, stride: number): Sequential {
    const out = planes * block.expansion;
    const downsample =
      stride !== 1 || this.inplanes !== out
        ? nn.sequential(conv(this.inplanes, out, 1, stride), batchNorm(out))
        : undefined;
    const layers: Module[] = [new block(this.inplanes, planes, stride, downsample)];
    this.inplanes = out;
    for (let i = 1; i < blocks; i += 1) layers.push(new block(this.inplanes, planes, 1));
    return nn.sequential(...layers);
  }

  forward(x: Tensor): Tensor {
    x = this.maxpool.forward(this.bn1.forward(this.conv1.forward(x)).relu());
    x = this.layer4.forward(this.layer3.forward(this.layer2.forward(this.layer1.forward(x))));
    return this.fc.forward(this.avgpool.forward(x).flatten(1));
  }
}
