#pragma once
// default_collate (torch.utils.data.default_collate): turns a list of samples into a batch.
// Tensors are stacked along a new dim 0; scalars become 1-D tensors (int64_t → int64,
// double → float64, as Python's int and float; float → float32, int → int32, bool → bool);
// vectors, pairs and tuples are collated position by position, string-keyed maps key by key,
// and strings are kept as a list.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/error.h"
#include "weft/tensor.h"

namespace weft::data {

// How one sample type collates: `type` is the batch type, `apply(samples, where)` builds it.
// `where` names the position inside the sample ("[1]", "['image']") for error messages. Types
// without a specialization have no `type` (they need a custom collate function).
template <typename T, typename Enable = void>
struct Collate {};

template <typename T>
using collate_result_t = typename Collate<T>::type;

template <typename T, typename = void>
struct is_collatable : std::false_type {};
template <typename T>
struct is_collatable<T, std::void_t<collate_result_t<T>>> : std::true_type {};
template <typename T>
inline constexpr bool is_collatable_v = is_collatable<T>::value;

// Stacks equally-shaped tensors along a new dim 0 (a plain copy when they are contiguous and
// of one dtype); the error names the entries that differ and `where`.
Tensor collate_tensors(const std::vector<Tensor>& batch, const std::string& where);
Tensor collate_scalars(const std::vector<std::int64_t>& batch);
Tensor collate_scalars(const std::vector<std::int32_t>& batch);
Tensor collate_scalars(const std::vector<double>& batch);
Tensor collate_scalars(const std::vector<float>& batch);
Tensor collate_scalars(const std::vector<bool>& batch);

template <>
struct Collate<Tensor> {
  using type = Tensor;
  static Tensor apply(const std::vector<Tensor>& batch, const std::string& where) {
    return collate_tensors(batch, where);
  }
};

template <typename T>
struct Collate<T, std::enable_if_t<std::is_same_v<T, std::int64_t> ||
                                   std::is_same_v<T, std::int32_t> || std::is_same_v<T, double> ||
                                   std::is_same_v<T, float> || std::is_same_v<T, bool>>> {
  using type = Tensor;
  static Tensor apply(const std::vector<T>& batch, const std::string& /*where*/) {
    return collate_scalars(batch);
  }
};

template <>
struct Collate<std::string> {
  using type = std::vector<std::string>;
  static type apply(const std::vector<std::string>& batch, const std::string& /*where*/) {
    return batch;
  }
};

template <typename T>
struct Collate<std::vector<T>, std::enable_if_t<is_collatable_v<T>>> {
  using type = std::vector<collate_result_t<T>>;
  static type apply(const std::vector<std::vector<T>>& batch, const std::string& where) {
    const std::size_t width = batch.front().size();
    for (std::size_t i = 1; i < batch.size(); ++i) {
      if (batch[i].size() != width) {
        throw Error(
            "default_collate: each element in list of batch should be of equal size, but "
            "got " +
            std::to_string(width) + " elements in sample 0 and " + std::to_string(batch[i].size()) +
            " in sample " + std::to_string(i) + (where.empty() ? "" : " at " + where));
      }
    }
    type out;
    out.reserve(width);
    std::vector<T> column(batch.size());
    for (std::size_t j = 0; j < width; ++j) {
      for (std::size_t i = 0; i < batch.size(); ++i) column[i] = batch[i][j];
      out.push_back(Collate<T>::apply(column, where + "[" + std::to_string(j) + "]"));
    }
    return out;
  }
};

template <typename A, typename B>
struct Collate<std::pair<A, B>, std::enable_if_t<is_collatable_v<A> && is_collatable_v<B>>> {
  using type = std::pair<collate_result_t<A>, collate_result_t<B>>;
  static type apply(const std::vector<std::pair<A, B>>& batch, const std::string& where) {
    std::vector<A> first;
    std::vector<B> second;
    first.reserve(batch.size());
    second.reserve(batch.size());
    for (const auto& sample : batch) {
      first.push_back(sample.first);
      second.push_back(sample.second);
    }
    return {Collate<A>::apply(first, where + "[0]"), Collate<B>::apply(second, where + "[1]")};
  }
};

template <typename... Ts>
struct Collate<std::tuple<Ts...>, std::enable_if_t<(is_collatable_v<Ts> && ...)>> {
  using type = std::tuple<collate_result_t<Ts>...>;
  static type apply(const std::vector<std::tuple<Ts...>>& batch, const std::string& where) {
    return apply_each(batch, where, std::index_sequence_for<Ts...>{});
  }

 private:
  template <std::size_t... I>
  static type apply_each(const std::vector<std::tuple<Ts...>>& batch, const std::string& where,
                         std::index_sequence<I...> /*positions*/) {
    return type{column<I>(batch, where)...};
  }
  template <std::size_t I>
  static auto column(const std::vector<std::tuple<Ts...>>& batch, const std::string& where) {
    using T = std::tuple_element_t<I, std::tuple<Ts...>>;
    std::vector<T> values;
    values.reserve(batch.size());
    for (const auto& sample : batch) values.push_back(std::get<I>(sample));
    return Collate<T>::apply(values, where + "[" + std::to_string(I) + "]");
  }
};

template <typename T>
struct Collate<std::map<std::string, T>, std::enable_if_t<is_collatable_v<T>>> {
  using type = std::map<std::string, collate_result_t<T>>;
  static type apply(const std::vector<std::map<std::string, T>>& batch, const std::string& where) {
    const auto& keys = batch.front();
    for (std::size_t i = 1; i < batch.size(); ++i) {
      for (const auto& [key, value] : batch[i]) {
        if (keys.count(key) == 0) {
          throw Error("default_collate: key '" + key + "' is in sample " + std::to_string(i) +
                      " but not in sample 0" + (where.empty() ? "" : " at " + where));
        }
      }
      for (const auto& [key, value] : keys) {
        if (batch[i].count(key) == 0) {
          throw Error("default_collate: key '" + key + "' is in sample 0 but not in sample " +
                      std::to_string(i) + (where.empty() ? "" : " at " + where));
        }
      }
    }
    type out;
    std::vector<T> column(batch.size());
    for (const auto& [key, unused] : keys) {
      for (std::size_t i = 0; i < batch.size(); ++i) column[i] = batch[i].at(key);
      out.emplace(key, Collate<T>::apply(column, where + "['" + key + "']"));
    }
    return out;
  }
};

// The batch type default_collate makes from a list of `Sample`s.
template <typename Sample>
using default_collate_t = collate_result_t<Sample>;

// Collates a non-empty list of samples into one batch (see the top of this file).
template <typename Sample>
default_collate_t<Sample> default_collate(const std::vector<Sample>& batch) {
  if (batch.empty()) throw Error("default_collate: expected at least one sample, got none");
  return Collate<Sample>::apply(batch, "");
}

}  // namespace weft::data
