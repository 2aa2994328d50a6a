// A table of rows by name, assembled once from families of rows (the graph's
// ops, the built-in layers): a name given twice is a firebrand bug.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/errors.h"

namespace firebrand {

template <typename Row>
std::map<std::string, Row> rowTable(std::initializer_list<std::vector<Row> (*)()> families, std::string Row::*name) {
  std::map<std::string, Row> all;
  for (const auto family : families) {
    for (Row& row : family()) {
      const std::string key = row.*name;
      if (!all.emplace(key, std::move(row)).second) throw InvalidState("firebrand bug: '" + key + "' has two rows");
    }
  }
  return all;
}

// The row named `key`, or nullptr.
template <typename Row>
const Row* rowNamed(const std::map<std::string, Row>& table, const std::string& key) {
  const auto it = table.find(key);
  return it == table.end() ? nullptr : &it->second;
}

template <typename Row>
std::vector<const Row*> rowsOf(const std::map<std::string, Row>& table) {
  std::vector<const Row*> rows;
  for (const auto& entry : table) rows.push_back(&entry.second);
  return rows;
}

}  // namespace firebrand
