"""Small image files of every kind firebrand decodes, and what torchvision 0.27 makes of them, for
test/images.test.ts. Run in the sid chroot, where python3-torchvision and python3-pil are (see README):

    python3 scripts/make-image-fixtures.py

test/fixtures/images/: JPEG (RGB, gray, EXIF-rotated), PNG (8-bit RGB, gray, RGBA, palette with transparency,
16-bit RGB and gray), WebP (lossless RGB, lossy RGBA), and broken files (a truncated JPEG and PNG,
text named .jpg). The pictures are smooth gradients with noise, so that resampling has something to do.
images.golden.safetensors: torchvision.io.decode_image of each good file in each read mode (16-bit PNGs as
their uint16 values in int32), and each transform below on the decoded RGB JPEG: v2's functional kernels with
fixed parameters, and v2's random transforms after torch.manual_seed(seed), which firebrand replays with a
generator of the same seed. images.golden.json lists the cases, and the samples torchvision's ImageFolder finds in folder/ (classes in
sorted order, upper case first; files found recursively; other extensions and case-folded ones as ImageFolder
takes them).
"""
import json
import pathlib
import shutil
import struct
import zlib

import numpy
import torch
import torchvision
from PIL import Image
from safetensors.torch import save_file
from torchvision.datasets import ImageFolder
from torchvision.io import ImageReadMode, decode_image
from torchvision.transforms import v2
from torchvision.transforms.v2 import functional as F

OUT = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "images"


def picture(height, width, channels, seed):
    """uint8 [H, W, C]: gradients plus noise."""
    generator = numpy.random.default_rng(seed)
    y, x = numpy.mgrid[0:height, 0:width]
    planes = [(x * 255 / width), (y * 255 / height), ((x + y) * 255 / (width + height))][:channels]
    while len(planes) < channels:
        planes.append(numpy.full((height, width), 200.0))
    image = numpy.stack(planes, axis=-1) + generator.normal(0, 12, (height, width, channels))
    return numpy.clip(image, 0, 255).astype(numpy.uint8)


def png16(path, pixels, color_type):
    """A 16-bit PNG (PIL writes only 16-bit gray): raw rows of big-endian samples, zlib-compressed."""
    height, width = pixels.shape[:2]
    rows = b"".join(b"\0" + pixels[y].astype(">u2").tobytes() for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 16, color_type, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def write_files():
    OUT.mkdir(parents=True, exist_ok=True)
    rgb = Image.fromarray(picture(48, 64, 3, 1))
    rgb.save(OUT / "rgb.jpg", quality=90)
    Image.fromarray(picture(40, 30, 1, 2)[..., 0]).save(OUT / "gray.jpg", quality=90)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 CW to display
    Image.fromarray(picture(20, 36, 3, 3)).save(OUT / "exif-rotated.jpg", quality=90, exif=exif)
    Image.fromarray(picture(33, 27, 3, 4)).save(OUT / "rgb.png")
    Image.fromarray(picture(25, 19, 1, 5)[..., 0]).save(OUT / "gray.png")
    Image.fromarray(picture(21, 23, 4, 6)).save(OUT / "rgba.png")
    palette = Image.fromarray(picture(18, 24, 3, 8)).quantize(colors=16)
    palette.save(OUT / "palette.png", transparency=3)
    wide = picture(17, 21, 3, 9).astype(numpy.uint16) * 257 + numpy.random.default_rng(9).integers(0, 257, (17, 21, 3)).astype(numpy.uint16)
    png16(OUT / "rgb16.png", wide, 2)
    png16(OUT / "gray16.png", wide[..., :1], 0)
    Image.fromarray(picture(19, 29, 3, 10)).save(OUT / "lossless.webp", lossless=True)
    Image.fromarray(picture(24, 20, 4, 11)).save(OUT / "rgba.webp", quality=80)
    jpeg = (OUT / "rgb.jpg").read_bytes()
    (OUT / "truncated.jpg").write_bytes(jpeg[: len(jpeg) // 2])
    png = (OUT / "rgb.png").read_bytes()
    (OUT / "truncated.png").write_bytes(png[: len(png) // 2])
    (OUT / "not-an-image.jpg").write_text("hello, I am text\n")


GOOD = ["rgb.jpg", "gray.jpg", "exif-rotated.jpg", "rgb.png", "gray.png", "rgba.png", "palette.png", "rgb16.png", "gray16.png", "lossless.webp", "rgba.webp"]
MODES = {"RGB": ImageReadMode.RGB, "GRAY": ImageReadMode.GRAY, "UNCHANGED": ImageReadMode.UNCHANGED, "RGB_ALPHA": ImageReadMode.RGB_ALPHA}


def decoded_goldens(tensors, cases):
    for name in GOOD:
        data = torchvision.io.read_file(str(OUT / name))
        for mode, read_mode in MODES.items():
            if name.endswith(".webp") and mode == "GRAY":  # torchvision warns and gives RGB; firebrand refuses
                continue
            if name == "palette.png" and mode == "UNCHANGED":  # torchvision gives the palette's indices; firebrand the colors
                continue
            try:
                image = decode_image(data, mode=read_mode, apply_exif_orientation=True)
            except RuntimeError:  # torchvision has no such mode for this format (GRAY WebP, RGB_ALPHA JPEG)
                continue
            key = f"decode/{name}/{mode}"
            tensors[key] = (image.to(torch.int32) if image.dtype == torch.uint16 else image).contiguous()
            cases.append({"kind": "decode", "file": name, "mode": mode, "key": key, "bits": 16 if image.dtype == torch.uint16 else 8})


# Deterministic transforms: firebrand's spec and torchvision's kernel on the same image.
FIXED = [
    ({"name": "resize", "size": 32}, lambda x: F.resize(x, [32])),
    ({"name": "resize", "size": [20, 30], "interpolation": "bicubic"}, lambda x: F.resize(x, [20, 30], interpolation=v2.InterpolationMode.BICUBIC)),
    ({"name": "resize", "size": 24, "antialias": False}, lambda x: F.resize(x, [24], antialias=False)),
    ({"name": "resize", "size": [100, 90]}, lambda x: F.resize(x, [100, 90])),
    ({"name": "resize", "size": 17, "interpolation": "nearest"}, lambda x: F.resize(x, [17], interpolation=v2.InterpolationMode.NEAREST)),
    ({"name": "resize", "size": 20, "maxSize": 25}, lambda x: F.resize(x, [20], max_size=25)),
    ({"name": "centerCrop", "size": 25}, lambda x: F.center_crop(x, [25])),
    ({"name": "centerCrop", "size": [60, 81]}, lambda x: F.center_crop(x, [60, 81])),
    ({"name": "grayscale"}, lambda x: F.rgb_to_grayscale(x)),
    ({"name": "grayscale", "numOutputChannels": 3}, lambda x: F.rgb_to_grayscale(x, num_output_channels=3)),
    ({"name": "toDtype", "dtype": "float32", "scale": True}, lambda x: F.to_dtype(x, torch.float32, scale=True)),
]
FIXED_FLOAT = [
    ({"name": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}, lambda x: F.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])),
    ({"name": "resize", "size": 30, "interpolation": "bicubic"}, lambda x: F.resize(x, [30], interpolation=v2.InterpolationMode.BICUBIC)),
    ({"name": "toDtype", "dtype": "uint8", "scale": True}, lambda x: F.to_dtype(x, torch.uint8, scale=True)),
]
# Random transforms: firebrand's spec with a seed, torchvision's transform after torch.manual_seed(seed).
RANDOM = [
    ([{"name": "randomResizedCrop", "size": 24}], v2.RandomResizedCrop(24)),
    ([{"name": "randomResizedCrop", "size": [16, 20], "scale": [0.5, 1], "ratio": [1, 1], "interpolation": "bicubic"}],
     v2.RandomResizedCrop([16, 20], scale=(0.5, 1), ratio=(1, 1), interpolation=v2.InterpolationMode.BICUBIC)),
    ([{"name": "randomResizedCrop", "size": 10, "scale": [2, 3]}], v2.RandomResizedCrop(10, scale=(2, 3))),
    ([{"name": "randomHorizontalFlip"}], v2.RandomHorizontalFlip()),
    ([{"name": "colorJitter", "brightness": [0.6, 1.4], "contrast": [0.6, 1.4], "saturation": [0.6, 1.4], "hue": [-0.1, 0.1]}],
     v2.ColorJitter(0.4, 0.4, 0.4, 0.1)),
    ([{"name": "colorJitter", "hue": [-0.5, 0.5]}], v2.ColorJitter(hue=0.5)),
    ([{"name": "randomResizedCrop", "size": 24}, {"name": "randomHorizontalFlip"},
      {"name": "colorJitter", "brightness": [0.6, 1.4], "contrast": [0.6, 1.4], "saturation": [0.6, 1.4]},
      {"name": "toDtype", "dtype": "float32", "scale": True}, {"name": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}],
     v2.Compose([v2.RandomResizedCrop(24), v2.RandomHorizontalFlip(), v2.ColorJitter(0.4, 0.4, 0.4),
                 v2.ToDtype(torch.float32, scale=True), v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])),
]
# v2's kernels on fixed parameters, for the functional forms behind the random transforms.
KERNELS = [
    ("adjust_brightness", 1.3), ("adjust_brightness", 0.4), ("adjust_contrast", 0.7), ("adjust_contrast", 1.6),
    ("adjust_saturation", 0.3), ("adjust_saturation", 1.8), ("adjust_hue", 0.2), ("adjust_hue", -0.45),
]


def transform_goldens(tensors, cases):
    image = decode_image(torchvision.io.read_file(str(OUT / "rgb.jpg")), mode=ImageReadMode.RGB)
    floats = F.to_dtype(image, torch.float32, scale=True)
    for i, (spec, kernel) in enumerate(FIXED):
        tensors[f"fixed/{i}"] = kernel(image).contiguous()
        cases.append({"kind": "fixed", "key": f"fixed/{i}", "input": "uint8", "transforms": [spec]})
    for i, (spec, kernel) in enumerate(FIXED_FLOAT):
        tensors[f"fixedFloat/{i}"] = kernel(floats).contiguous()
        cases.append({"kind": "fixed", "key": f"fixedFloat/{i}", "input": "float32", "transforms": [spec]})
    for i, (name, factor) in enumerate(KERNELS):
        # ColorJitter draws float32 factors: firebrand gives this one as a range of one value.
        factor = float(numpy.float32(factor))
        tensors[f"kernel/{i}"] = getattr(F, name)(image, factor).contiguous()
        jitter = {"adjust_brightness": "brightness", "adjust_contrast": "contrast", "adjust_saturation": "saturation", "adjust_hue": "hue"}[name]
        cases.append({"kind": "fixed", "key": f"kernel/{i}", "input": "uint8", "transforms": [{"name": "colorJitter", jitter: [factor, factor]}]})
    for i, (specs, transform) in enumerate(RANDOM):
        for seed in (0, 1, 7):
            torch.manual_seed(seed)
            tensors[f"random/{i}/{seed}"] = transform(image).contiguous()
            cases.append({"kind": "random", "key": f"random/{i}/{seed}", "seed": seed, "transforms": specs})


FOLDER = {
    "cat/b.png": "rgb.png", "cat/a.jpg": "rgb.jpg", "cat/notes.txt": None, "cat/C.PNG": "gray.png",
    "dog/z.webp": "lossless.webp", "dog/puppies/p1.png": "rgba.png", "dog/puppies/deeper/p0.jpg": "gray.jpg",
    "dog/pup.jpeg": "exif-rotated.jpg", "Zebra/stripes.png": "palette.png",
}


def write_folder():
    root = OUT / "folder"
    shutil.rmtree(root, ignore_errors=True)
    for name, source in FOLDER.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source is None:
            target.write_text("not an image\n")
        else:
            shutil.copyfile(OUT / source, target)
    folder = ImageFolder(str(root), allow_empty=True)
    return {"classes": folder.classes, "samples": [[str(pathlib.Path(p).relative_to(root)), label] for p, label in folder.samples]}


def main():
    write_files()
    image_folder = write_folder()
    tensors, cases = {}, []
    decoded_goldens(tensors, cases)
    transform_goldens(tensors, cases)
    save_file(tensors, str(OUT / "images.golden.safetensors"))
    versions = {"torch": torch.__version__, "torchvision": torchvision.__version__, "cpu": torch.backends.cpu.get_cpu_capability()}
    (OUT / "images.golden.json").write_text(json.dumps({"versions": versions, "imageFolder": image_folder, "cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main()
