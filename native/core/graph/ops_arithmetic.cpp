// Arithmetic: on tensors (broadcasting, a number for either operand as PyTorch
// allows) and on traced sizes (x.size(d) and what forward computes from it).
#include <ATen/Functions.h>

#include "core/errors.h"
#include "core/graph/inference_folding.h"
#include "core/graph/op_support.h"
#include "core/nn/channels_last_maps.h"

namespace firebrand {
namespace {

OpCompile addLike(bool subtract) {
  return [subtract](const NodeArgs& a) -> OpRun {
    a.expectCount(3);
    const int64_t xs = a.tensor(0);
    const Operand y = operand(a, 1);
    const at::Scalar alpha = scalarAt(a, 2);
    if (y.slot >= 0) {
      const int64_t ys = y.slot;
      return [=](GraphFrame& f) -> c10::IValue {
        return subtract ? at::sub(T(f, xs), T(f, ys), alpha) : at::add(T(f, xs), T(f, ys), alpha);
      };
    }
    const at::Scalar other = y.scalar;
    return [=](GraphFrame& f) -> c10::IValue {
      return subtract ? at::sub(T(f, xs), other, alpha) : at::add(T(f, xs), other, alpha);
    };
  };
}

at::Tensor multiplied(const at::Tensor& x, const at::Scalar& y) { return at::mul(x, y); }

// A lowered predict's channels-last map times a per-channel gate (a squeeze-and-excitation block's) multiplies
// on firebrand's kernel.
at::Tensor multiplied(const at::Tensor& x, const at::Tensor& y) {
  if (inferenceLoweringActive()) {
    if (auto product = gateChannels(x, y)) return *product;
    if (auto product = gateChannels(y, x)) return *product;
  }
  return at::mul(x, y);
}

template <typename Fn>
OpCompile sizeArithmetic(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    const IntArg x = a.integer(0), y = a.integer(1);
    return [=](GraphFrame& f) -> c10::IValue { return fn(x.get(f), y.get(f)); };
  };
}

// Python's //: rounds toward negative infinity.
int64_t floorDivide(int64_t x, int64_t d) {
  if (d == 0) throw InvalidArgument("integer division by zero");
  const int64_t q = x / d;
  return (x % d != 0 && ((x < 0) != (d < 0))) ? q - 1 : q;
}

OpScript infix(const char* symbol) {
  return [symbol](const GraphNode&, const ScriptArgs& a) { return a[0] + " " + symbol + " " + a[1]; };
}

OpScript withAlpha(const char* function) {
  return [function](const GraphNode&, const ScriptArgs& a) {
    return std::string(function) + "(" + a[0] + ", " + a[1] + ", alpha=" + a[2] + ")";
  };
}

OpRun size(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const int64_t dim = a.integer(1).value;
  const size_t node = a.index();
  return [=](GraphFrame& f) -> c10::IValue {
    const int64_t size = T(f, x).size(dim);
    if (f.cache) f.cache->noteSize(node, size);
    return size;
  };
}

OpRun divide(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const Operand y = operand(a, 1);
  const auto mode = a.optionalText(2);
  return [=](GraphFrame& f) -> c10::IValue {
    const c10::optional<c10::string_view> how = mode ? c10::optional<c10::string_view>(*mode) : c10::nullopt;
    return y.slot >= 0 ? at::div(T(f, x), T(f, y.slot), how) : at::div(T(f, x), y.scalar, how);
  };
}

template <at::Tensor (*Fn)(const at::Tensor&, const at::Tensor&)>
OpRun tensorPair(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0), y = a.tensor(1);
  return [=](GraphFrame& f) -> c10::IValue { return Fn(T(f, x), T(f, y)); };
}

// torch.addmm(input, mat1, mat2): input + mat1 @ mat2 in one BLAS call (GPT-2's Conv1D).
OpRun addmm(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t input = a.tensor(0), x = a.tensor(1), y = a.tensor(2);
  return [=](GraphFrame& f) -> c10::IValue { return at::addmm(T(f, input), T(f, x), T(f, y)); };
}

// x.size(d) as a 0-d int64: read from x's shape when the model runs.
OnnxValue sizeOnnx(const OnnxOp& o) {
  const int64_t dim = normalizedDim(o.constant(1), o.rank(0));
  return {o.b.squeeze(o.b.shape(o.tensor(0), dim, dim + 1), {0})};
}

OnnxForm sizeArithmeticOnnx(const char* opType) {
  return [opType](const OnnxOp& o) -> OnnxValue { return {o.b.op(opType, {o.integer(0), o.integer(1)})}; };
}

// Python's // on integers: (x - x mod d) / d, Mod with fmod 0 taking the divisor's sign.
std::string integerFloorDivide(OnnxBuilder& b, const std::string& x, const std::string& d) {
  return b.op("Div", {b.op("Sub", {x, b.op("Mod", {x, d})}), d});
}

OnnxValue floorDivideOnnx(const OnnxOp& o) { return {integerFloorDivide(o.b, o.integer(0), o.integer(1))}; }

OnnxForm addLikeOnnx(const char* opType) {
  return [opType](const OnnxOp& o) -> OnnxValue {
    const at::ScalarType type = o.resultType();
    std::string y = o.operand(1, type);
    if (o.args.number(2) != 1) y = o.b.op("Mul", {y, o.operand(2, type)});
    return {o.b.op(opType, {o.operand(0, type), y})};
  };
}

// torch.div: true division in the result's (floating) type, or rounded 'floor' / 'trunc'.
OnnxValue divideOnnx(const OnnxOp& o) {
  const at::ScalarType type = o.resultType();
  const std::string x = o.operand(0, type), y = o.operand(1, type);
  const auto mode = o.args.optionalText(2);
  if (!mode) return {o.b.op("Div", {x, y})};
  const bool integral = !at::isFloatingType(type);
  if (*mode == "floor") return {integral ? integerFloorDivide(o.b, x, y) : o.b.op("Floor", {o.b.op("Div", {x, y})})};
  if (integral) return {o.b.op("Div", {x, y})};  // ONNX's integer Div truncates
  const std::string quotient = o.b.op("Div", {x, y});
  return {o.b.op("Mul", {o.b.op("Sign", {quotient}), o.b.op("Floor", {o.b.op("Abs", {quotient})})})};
}

OnnxValue addmmOnnx(const OnnxOp& o) {
  const at::ScalarType type = o.resultType();
  return {o.b.op("Gemm", {o.operand(1, type), o.operand(2, type), o.operand(0, type)})};
}

}  // namespace

OpRows arithmeticOps() {
  return {
      {"size", size, [](const GraphNode&, const ScriptArgs& a) { return a[0] + ".size(" + a[1] + ")"; }, sizeOnnx},
      {"intAdd", sizeArithmetic([](int64_t x, int64_t y) { return x + y; }), infix("+"), sizeArithmeticOnnx("Add")},
      {"intSub", sizeArithmetic([](int64_t x, int64_t y) { return x - y; }), infix("-"), sizeArithmeticOnnx("Sub")},
      {"intMul", sizeArithmetic([](int64_t x, int64_t y) { return x * y; }), infix("*"), sizeArithmeticOnnx("Mul")},
      {"intFloorDiv", sizeArithmetic(floorDivide), infix("//"), floorDivideOnnx},
      {"add", addLike(false), withAlpha("torch.add"), addLikeOnnx("Add")},
      {"sub", addLike(true), withAlpha("torch.sub"), addLikeOnnx("Sub")},
      {"mul", binaryOp([](const auto& x, const auto& y) { return multiplied(x, y); }), scriptCall("torch.mul"),
       onnxBinary("Mul")},
      {"pow", binaryOp([](const auto& x, const auto& y) { return at::pow(x, y); }), scriptCall("torch.pow"),
       onnxBinary("Pow")},
      {"div", divide,
       [](const GraphNode&, const ScriptArgs& a) {
         return "torch.div(" + a[0] + ", " + a[1] + ", rounding_mode=" + a[2] + ")";
       },
       divideOnnx},
      {"neg", unaryOp([](const at::Tensor& x) { return x.neg(); }), scriptCall("torch.neg"), onnxUnary("Neg")},
      {"matmul", tensorPair<at::matmul>, scriptCall("torch.matmul"), onnxBinary("MatMul")},
      {"bmm", tensorPair<at::bmm>, scriptCall("torch.bmm"), onnxBinary("MatMul")},
      {"addmm", addmm, scriptCall("torch.addmm"), addmmOnnx},
  };
}

}  // namespace firebrand
