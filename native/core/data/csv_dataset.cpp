#include "core/data/csv_dataset.h"

#include <ATen/ATen.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/options/resolved_options.h"

namespace firebrand {
namespace {

std::vector<std::string> splitLine(const std::string& line, char delimiter) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream stream(line);
  while (std::getline(stream, cell, delimiter)) cells.push_back(cell);
  if (!line.empty() && line.back() == delimiter) cells.emplace_back();
  return cells;
}

std::string trimmed(std::string text) {
  const auto begin = text.find_first_not_of(" \t\r");
  const auto end = text.find_last_not_of(" \t\r");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

}  // namespace

CsvOptions csvOptions(const OptionMap& optionMap) {
  ResolvedOptions resolved("Dataset.fromCsv options", optionMap);
  CsvOptions options;
  if (resolved.holdsText("labelColumn")) {
    options.labelName = resolved.text("labelColumn");
  } else {
    options.labelIndex = resolved.has("labelColumn") ? resolved.integer("labelColumn") : -1;
  }
  options.delimiter = resolved.text("delimiter").at(0);
  options.header = resolved.flag("header");
  options.classLabels = resolved.text("targets") == "class";
  resolved.finish();
  return options;
}

TensorDataset loadCsvDataset(const std::string& path, const CsvOptions& options) {
  checkInputFile(path, "CSV file");
  std::ifstream file(path);
  if (!file) throw FileError(path + ": cannot open CSV file (" + std::strerror(errno) + ")");
  std::string line;
  int64_t lineNumber = 0;
  int64_t columns = -1;
  int64_t labelColumn = options.labelIndex;
  if (options.header) {
    if (!std::getline(file, line)) throw FileError(path + ": empty CSV file (expected a header line)");
    ++lineNumber;
    const auto names = splitLine(line, options.delimiter);
    columns = static_cast<int64_t>(names.size());
    if (!options.labelName.empty()) {
      labelColumn = -1;
      for (size_t i = 0; i < names.size(); ++i) {
        if (trimmed(names[i]) == options.labelName) labelColumn = static_cast<int64_t>(i);
      }
      if (labelColumn < 0)
        throw FileError(path + ": no column named '" + options.labelName + "' in the header: " + line);
    }
  } else if (!options.labelName.empty()) {
    throw InvalidArgument("Dataset.fromCsv: labelColumn '" + options.labelName + "' needs header: true; give an index");
  }

  std::vector<float> inputs;
  std::vector<double> targets;
  while (std::getline(file, line)) {
    ++lineNumber;
    if (trimmed(line).empty()) continue;
    const auto cells = splitLine(line, options.delimiter);
    if (columns < 0) columns = static_cast<int64_t>(cells.size());
    if (static_cast<int64_t>(cells.size()) != columns) {
      throw FileError(path + ":" + std::to_string(lineNumber) + ": " + std::to_string(cells.size()) +
                      " columns, expected " + std::to_string(columns));
    }
    const int64_t label = labelColumn < 0 ? columns - 1 : labelColumn;
    if (label >= columns) {
      throw InvalidArgument("Dataset.fromCsv: labelColumn " + std::to_string(label) + " is past the last column (" +
                            std::to_string(columns - 1) + ")");
    }
    for (int64_t column = 0; column < columns; ++column) {
      const std::string cell = trimmed(cells[column]);
      char* end = nullptr;
      const double value = std::strtod(cell.c_str(), &end);
      if (cell.empty() || *end != '\0') {
        throw FileError(path + ":" + std::to_string(lineNumber) + ": column " + std::to_string(column + 1) +
                        " holds '" + cell + "', not a number");
      }
      if (column != label) {
        inputs.push_back(static_cast<float>(value));
      } else if (options.classLabels && value != std::floor(value)) {
        throw FileError(path + ":" + std::to_string(lineNumber) + ": class label '" + cell +
                        "' is not an integer (use targets: 'value' for regression)");
      } else {
        targets.push_back(value);
      }
    }
  }
  if (targets.empty()) throw FileError(path + ": the CSV file holds no data rows");
  const auto rows = static_cast<int64_t>(targets.size());
  at::Tensor inputTensor = at::tensor(inputs, at::TensorOptions().dtype(at::kFloat)).reshape({rows, columns - 1});
  at::Tensor targetTensor =
      at::tensor(targets, at::TensorOptions().dtype(at::kDouble)).to(options.classLabels ? at::kLong : at::kFloat);
  return TensorDataset(inputTensor, targetTensor);
}

}  // namespace firebrand
