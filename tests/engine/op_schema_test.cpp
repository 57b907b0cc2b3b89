#include "weft/ir/op_schema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include "weft/error.h"

namespace weft::ir {
namespace {

TEST(OpSchema, EveryOpHasARowDescribingItself) {
  for (OpKind op : kAllOps) {
    const OpSchema& s = schema(op);
    SCOPED_TRACE(std::string(op_name(op)));
    EXPECT_EQ(s.op, op);
    EXPECT_EQ(s.name(), op_name(op));
    EXPECT_FALSE(s.family.empty());
    EXPECT_FALSE(s.input_names.empty());
    EXPECT_GE(s.min_inputs, 1);
    if (s.max_inputs == -1) {
      EXPECT_EQ(s.input_names.size(), 1u) << "a variadic op has one name for all its inputs";
    } else {
      EXPECT_LE(s.min_inputs, s.max_inputs);
      EXPECT_EQ(static_cast<int>(s.input_names.size()), s.max_inputs);
    }
    EXPECT_TRUE(s.num_outputs == -1 || s.num_outputs >= 1);
    EXPECT_TRUE(s.accepts_input_count(s.min_inputs));
    EXPECT_FALSE(s.accepts_input_count(s.min_inputs - 1));
  }
}

TEST(OpSchema, OpNamesRoundTripAndAreUnique) {
  std::set<std::string_view> names;
  for (OpKind op : kAllOps) {
    EXPECT_EQ(op_from_name(op_name(op)), op);
    EXPECT_TRUE(names.insert(op_name(op)).second) << op_name(op);
  }
  EXPECT_EQ(names.size(), kNumOps);
  EXPECT_FALSE(op_from_name("conv3d").has_value());
}

TEST(OpSchema, AttributeSpecsAreConsistent) {
  for (OpKind op : kAllOps) {
    const OpSchema& s = schema(op);
    std::set<std::string> seen;
    for (const AttrSpec& spec : s.attrs) {
      SCOPED_TRACE(std::string(op_name(op)) + "." + spec.name);
      EXPECT_TRUE(seen.insert(spec.name).second) << "duplicate attribute";
      EXPECT_EQ(s.find_attr(spec.name), &spec);
      if (spec.required) {
        EXPECT_FALSE(spec.default_value.has_value());
      }
      if (spec.default_value) {
        EXPECT_EQ(attr_type(*spec.default_value), spec.type);
      }
      if (!spec.allowed.empty()) {
        EXPECT_EQ(spec.type, AttrType::String);
        if (spec.default_value) {
          const auto& value = std::get<std::string>(*spec.default_value);
          EXPECT_NE(std::find(spec.allowed.begin(), spec.allowed.end(), value), spec.allowed.end());
        }
      }
    }
    EXPECT_EQ(s.find_attr("no_such_attribute"), nullptr);
  }
}

TEST(OpSchema, UnknownOpValueIsAnError) {
  EXPECT_THROW(schema(static_cast<OpKind>(kNumOps)), Error);
}

TEST(OpSchema, FollowsPyTorchSignatures) {
  const OpSchema& conv = schema(OpKind::Conv2d);
  EXPECT_EQ(conv.family, "conv");
  EXPECT_EQ(conv.input_names, (std::vector<std::string>{"input", "weight", "bias"}));
  EXPECT_EQ(conv.input_count_text(), "2 or 3");
  ASSERT_NE(conv.find_attr("stride"), nullptr);
  EXPECT_EQ(conv.find_attr("stride")->type, AttrType::IntList);
  EXPECT_EQ(*conv.find_attr("stride")->default_value, AttrValue(std::vector<std::int64_t>{1}));
  EXPECT_EQ(*conv.find_attr("groups")->default_value, AttrValue(std::int64_t{1}));

  EXPECT_EQ(schema(OpKind::Max).num_outputs, 2);
  EXPECT_TRUE(schema(OpKind::Max).find_attr("dim")->required);
  EXPECT_EQ(schema(OpKind::Split).num_outputs, -1);
  EXPECT_EQ(schema(OpKind::Chunk).num_outputs, -1);

  const OpSchema& bn = schema(OpKind::BatchNorm);
  EXPECT_TRUE(bn.accepts_input_count(3));
  EXPECT_FALSE(bn.accepts_input_count(4));
  EXPECT_TRUE(bn.accepts_input_count(5));
  EXPECT_EQ(bn.input_count_text(), "3 or 5");
  EXPECT_TRUE(schema(OpKind::LayerNorm).accepts_input_count(1));
  EXPECT_FALSE(schema(OpKind::LayerNorm).accepts_input_count(2));

  const OpSchema& cat = schema(OpKind::Cat);
  EXPECT_EQ(cat.max_inputs, -1);
  EXPECT_TRUE(cat.accepts_input_count(7));
  EXPECT_EQ(cat.input_count_text(), "at least 1");

  EXPECT_EQ(schema(OpKind::Where).input_names,
            (std::vector<std::string>{"condition", "self", "other"}));
  EXPECT_EQ(schema(OpKind::Addmm).input_names, (std::vector<std::string>{"self", "mat1", "mat2"}));

  // Floats stay floats even where PyTorch's default is written as an integer.
  EXPECT_EQ(schema(OpKind::Softplus).find_attr("beta")->type, AttrType::Float);
  EXPECT_EQ(*schema(OpKind::Slice).find_attr("end")->default_value,
            AttrValue(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(schema(OpKind::Gelu).find_attr("approximate")->allowed,
            (std::vector<std::string>{"none", "tanh"}));
  EXPECT_EQ(schema(OpKind::Cast).find_attr("dtype")->type, AttrType::Dtype);
  EXPECT_TRUE(schema(OpKind::Cast).find_attr("dtype")->required);

  // Optional attributes without a default mean "none" when absent.
  const AttrSpec* rounding = schema(OpKind::Div).find_attr("rounding_mode");
  EXPECT_FALSE(rounding->required);
  EXPECT_FALSE(rounding->default_value.has_value());
  EXPECT_FALSE(schema(OpKind::Clamp).find_attr("min")->default_value.has_value());
}

TEST(OpSchema, WithDefaultsFillsOnlyAbsentDefaultedAttributes) {
  Attributes attrs;
  attrs.set("stride", {2, 2});
  const Attributes filled = with_defaults(OpKind::Conv2d, attrs);
  EXPECT_EQ(filled.get_ints("stride"), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(filled.get_ints("padding"), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(filled.get_int("groups"), 1);
  EXPECT_EQ(filled.size(), 4u);
  EXPECT_FALSE(with_defaults(OpKind::Clamp, Attributes()).has("min"));
}

}  // namespace
}  // namespace weft::ir
