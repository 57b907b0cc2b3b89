// The tracer's bookkeeping: tensors → graph values, constants, nodes with inferred types.
#include "weft/ir/tracer.h"

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ir/validate.h"

namespace weft::ir {

namespace {

TensorType type_of(const Tensor& t) {
  return TensorType{t.dtype(), Shape(t.sizes().begin(), t.sizes().end())};
}

}  // namespace

Tracer::Tracer() {
  detail::TracerSlot& slot = detail::tracer_slot();
  if (slot.tracer != nullptr)
    throw Error("trace: a trace is already being recorded on this thread");
  slot.tracer = this;
  slot.suspended = false;
}

Tracer::~Tracer() {
  detail::TracerSlot& slot = detail::tracer_slot();
  if (slot.tracer == this) slot = detail::TracerSlot{};
}

void Tracer::remember(const Tensor& tensor, ValueId id) {
  ids_.emplace(tensor.impl_ptr().get(), id);
  alive_.push_back(tensor);
}

void Tracer::add_input(const std::string& name, const Tensor& tensor) {
  if (ids_.count(tensor.impl_ptr().get()) != 0) return;
  remember(tensor, graph_.add_input(name, type_of(tensor)));
}

void Tracer::add_parameter(const std::string& name, const Tensor& tensor) {
  if (ids_.count(tensor.impl_ptr().get()) != 0) return;
  remember(tensor, graph_.add_parameter(name, type_of(tensor)));
}

ValueId Tracer::value_of(const Tensor& tensor, OpKind consumer) {
  const auto found = ids_.find(tensor.impl_ptr().get());
  if (found != ids_.end()) return found->second;
  if (tensor.grad_fn()) {
    throw Error("trace: an input of " + std::string(op_name(consumer)) +
                " was computed by an operation the tracer does not record (" +
                tensor.grad_fn()->name() +
                "); compute it with weft ops so that the trace can replay it");
  }
  // A value made during the forward (a scalar, zeros(...), a tensor literal): frozen as is.
  const std::string name = "constant" + std::to_string(constants_.size());
  constants_.emplace(name, tensor.detach().clone());
  const ValueId id = graph_.add_parameter(name, type_of(tensor));
  remember(tensor, id);
  return id;
}

std::vector<ValueId> Tracer::input_ids(OpKind op, const std::vector<Tensor>& inputs) {
  std::vector<ValueId> ids;
  ids.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    if (t.defined()) ids.push_back(value_of(t, op));
  }
  return ids;
}

void Tracer::add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                      const std::vector<Tensor>& outputs) {
  std::vector<TensorType> types;
  types.reserve(outputs.size());
  for (const Tensor& t : outputs) types.push_back(type_of(t));
  const std::vector<ValueId> ids = graph_.add_node(op, std::move(inputs), std::move(attrs), types);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    // An op that returns one of its inputs unchanged (a no-op reshape) keeps the input's value.
    if (ids_.count(outputs[i].impl_ptr().get()) == 0) remember(outputs[i], ids[i]);
  }
}

void Tracer::add_alias(const Tensor& original, const Tensor& alias) {
  if (original.is_same(alias) || ids_.count(alias.impl_ptr().get()) != 0) return;
  const auto found = ids_.find(original.impl_ptr().get());
  if (found != ids_.end()) remember(alias, found->second);
}

void Tracer::check_not_traced(const Tensor& tensor, const char* method) const {
  if (ids_.count(tensor.impl_ptr().get()) == 0) return;
  throw Error(std::string("trace: in-place ") + method +
              " on a traced value cannot be recorded; use the out-of-place op instead");
}

Graph Tracer::finish(const std::vector<Tensor>& outputs) {
  if (finished_) throw Error("trace: finish() was already called");
  finished_ = true;
  detail::TracerSlot& slot = detail::tracer_slot();
  if (slot.tracer == this) slot = detail::TracerSlot{};
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto found = ids_.find(outputs[i].impl_ptr().get());
    if (found == ids_.end()) {
      throw Error("trace: output " + std::to_string(i) +
                  " was not computed from the traced inputs by weft ops");
    }
    graph_.mark_output(found->second);
  }
  validate(graph_);
  return graph_;
}

}  // namespace weft::ir
