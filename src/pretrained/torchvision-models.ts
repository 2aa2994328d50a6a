// torchvision.models' constructors: `torchvision.models.resnet18({ weights })`
// builds the architecture and, given a state dict (torch.save .pth/.pt or
// .safetensors, as torchvision publishes them), loads it when a trainer sets
// up, strictly. Replace a head after building (model.fc = nn.linear(512, 10))
// and the file's weights for the old head are left out.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import type { Module } from '../nn/module/module';
import { BasicBlock, Bottleneck, ResNet, type ResNetOptions } from './architectures/torchvision-resnet';
import { MobileNetV3, type MobileNetV3Options } from './architectures/torchvision-mobilenetv3';
import { setPretrainedSource } from './from-pretrained';

export interface WeightsOption {
  /** A state dict file whose names are torchvision's: .pth/.pt (torch.save, read without running its pickle) or .safetensors. */
  weights?: string;
}

function withWeights<M extends Module>(model: M, architecture: string, weights: string | undefined): M {
  if (weights === undefined) return model;
  if (!fs.existsSync(weights) || !fs.statSync(weights).isFile()) {
    throw firebrandError('ERR_FIREBRAND_FILE', `torchvision.models: weights file ${weights} does not exist`);
  }
  setPretrainedSource(model, {
    folder: path.dirname(weights),
    config: { model_type: architecture, architectures: [architecture] },
    weightFiles: [weights],
    newHead: false,
  });
  return model;
}

const resnet =
  (name: string, block: typeof BasicBlock | typeof Bottleneck, layers: [number, number, number, number]) =>
  ({ weights, ...options }: ResNetOptions & WeightsOption = {}): ResNet =>
    withWeights(new ResNet(block, layers, options), name, weights);

const mobilenet =
  (arch: 'large' | 'small') =>
  ({ weights, ...options }: MobileNetV3Options & WeightsOption = {}): MobileNetV3 =>
    withWeights(new MobileNetV3(arch, options), `mobilenet_v3_${arch}`, weights);

/** torchvision's model constructors, under camelCase names. */
export const torchvision = {
  models: {
    resnet18: resnet('resnet18', BasicBlock, [2, 2, 2, 2]),
    resnet34: resnet('resnet34', BasicBlock, [3, 4, 6, 3]),
    resnet50: resnet('resnet50', Bottleneck, [3, 4, 6, 3]),
    resnet101: resnet('resnet101', Bottleneck, [3, 4, 23, 3]),
    resnet152: resnet('resnet152', Bottleneck, [3, 8, 36, 3]),
    mobilenetV3Large: mobilenet('large'),
    mobilenetV3Small: mobilenet('small'),
  },
};
