#include "src/api/json_writer.h"

#include <algorithm>
#include <array>

#include "nlohmann/json.hpp"
#include "src/time/rfc3339.h"

namespace chime::api {
namespace {

// kPlain[byte]: nlohmann prints it as it is in every context -- printable
// ASCII other than the two it escapes. (A table: the check runs on every byte
// of a page.)
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x7f; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

}  // namespace

void AppendJsonString(absl::string_view value, std::string* out) {
  if (std::all_of(value.begin(), value.end(), [](char c) {
        return kPlain[static_cast<unsigned char>(c)];
      })) {
    out->push_back('"');
    out->append(value.data(), value.size());
    out->push_back('"');
    return;
  }
  // Rare (output, details with newlines, non-ASCII names): the reference
  // escaping, with JsonResponse's options.
  out->append(nlohmann::ordered_json(std::string(value))
                  .dump(-1, ' ', /*ensure_ascii=*/false,
                        nlohmann::ordered_json::error_handler_t::replace));
}

JsonWriter& JsonWriter::Open(char bracket) {
  Separate();
  out_.push_back(bracket);
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  out_.push_back(bracket);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::Raw(absl::string_view json) {
  Separate();
  out_.append(json.data(), json.size());
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::Key(absl::string_view name) {
  Separate();
  AppendJsonString(name, &out_);
  out_.push_back(':');
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::String(absl::string_view value) {
  Separate();
  AppendJsonString(value, &out_);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::Time(absl::Time value) {
  Separate();
  // RFC 3339 text is plain ASCII: no escaping to do.
  out_.push_back('"');
  time::AppendUtc(value, &out_);
  out_.push_back('"');
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::TimeOrNull(absl::Time value) {
  if (value == absl::InfiniteFuture() || value == absl::InfinitePast()) {
    return Null();
  }
  return Time(value);
}

JsonWriter& JsonWriter::Double(double value) {
  return Raw(nlohmann::ordered_json(value).dump());
}

void JsonWriterOut::BeginObject() {
  w_.BeginObject();
  open_.push_back({before_key_, w_.Here().size});
}

void JsonWriterOut::EndObject() {
  open_.pop_back();
  w_.EndObject();
}

void JsonWriterOut::EndObjectOrDropIfEmpty() {
  const Open open = open_.back();
  open_.pop_back();
  if (w_.Here().size == open.empty_size) {
    w_.Rewind(open.before_key);
  } else {
    w_.EndObject();
  }
}

}  // namespace chime::api
