#pragma once
// Merging campaign directories (`weft merge`), also used by `weft report ROOT` on a root of
// shard directories.
#include <filesystem>
#include <string>
#include <vector>

namespace weft::cli {

// True for a directory that is no campaign but holds campaign directories (a sharded
// campaign's root: ROOT/shard-0-of-8, ...).
bool holds_shards(const std::filesystem::path& dir);

// Merges `inputs` (campaign directories or roots of shard directories) into `out`, which must
// be missing or empty; writes shards.json with every shard's state. Prints nothing.
void merge_into(const std::vector<std::string>& inputs, const std::filesystem::path& out);

}  // namespace weft::cli
