// JsonWriter: appends compact JSON to a string as it goes, for the responses
// that are large and hot (run listings) where building an
// nlohmann::ordered_json tree first -- a heap node per field -- and then
// dumping it costs more than the rest of the request.
//
// The text is byte for byte what JsonResponse (http_util.h) prints for the
// same values in the same order: nlohmann's dump(-1) with invalid UTF-8
// replaced by U+FFFD. Strings of printable ASCII without '"' or '\' -- nearly
// every string of the API: names, times, states -- are copied as they are;
// any other string is escaped by nlohmann itself, so that control characters,
// non-ASCII text and invalid UTF-8 come out exactly as it prints them.
//
//   std::string out;
//   JsonWriter w(&out);
//   w.BeginObject().Key("id").Int(7).Key("detail").String("ok").EndObject();
//   // out == R"({"id":7,"detail":"ok"})"
//
// The writer puts the commas and colons; it does not check the nesting (a
// Key outside an object, an unclosed array): the caller writes a well-formed
// sequence, as the routes' tests check by parsing what they answer.
//
// Thread-safety: none; one writer per string.
#ifndef CHIME_SRC_API_JSON_WRITER_H_
#define CHIME_SRC_API_JSON_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace chime::api {

class JsonWriter {
 public:
  // Appends to `*out`, which outlives the writer.
  explicit JsonWriter(std::string* out) : out_(*out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  // An object's member name; its value is the next call.
  JsonWriter& Key(absl::string_view name);

  JsonWriter& String(absl::string_view value);
  // absl::AlphaNum prints integers as nlohmann does, and without allocating.
  JsonWriter& Int(int64_t value) { return Raw(absl::AlphaNum(value).Piece()); }
  JsonWriter& Uint(uint64_t value) {
    return Raw(absl::AlphaNum(value).Piece());
  }
  JsonWriter& Bool(bool value) { return Raw(value ? "true" : "false"); }
  JsonWriter& Null() { return Raw("null"); }
  // An RFC 3339 UTC time as a string (time::FormatUtc's text).
  JsonWriter& Time(absl::Time value);
  // As Time, or null for an infinite time (http_util.h's TimeOrNull).
  JsonWriter& TimeOrNull(absl::Time value);

 private:
  // Called before every value, key and opening bracket: the comma that
  // separates it from the previous element, if any.
  void Separate() {
    if (need_comma_) out_.push_back(',');
  }
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);
  // `json`, a complete value (a number, true, false, null), as it is.
  JsonWriter& Raw(absl::string_view json);

  std::string& out_;
  // The last thing written was a complete value (not '{', '[' or a key).
  bool need_comma_ = false;
};

// Appends `value` as a JSON string literal, quotes included, to `*out` (see
// the file comment for how it is escaped).
void AppendJsonString(absl::string_view value, std::string* out);

}  // namespace chime::api

#endif  // CHIME_SRC_API_JSON_WRITER_H_
