// .safetensors files from JavaScript, through firebrand's C++ reader (every
// offset checked) and writer (the layout safetensors.torch.save_file writes).
import { native, NumericArray, TensorData } from '../native';

export interface SafetensorsContents {
  tensors: Record<string, TensorData<NumericArray>>;
  /** The header's "__metadata__". */
  metadata: Record<string, string>;
}

/** Reads every tensor of a .safetensors file (float16/bfloat16 come back as Float32Array). */
export async function loadSafetensors(path: string): Promise<SafetensorsContents> {
  return native.loadSafetensors(path);
}

/** Writes tensors (and string metadata) as a .safetensors file, atomically: readers never see half a file. */
export async function saveSafetensors(
  path: string,
  tensors: Record<string, TensorData<NumericArray>>,
  metadata?: Record<string, string>,
): Promise<void> {
  return native.saveSafetensors(path, tensors, metadata);
}
