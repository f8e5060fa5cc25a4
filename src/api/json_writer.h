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
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/config/json_out.h"

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
  // As nlohmann prints a double (a non-finite one as null).
  JsonWriter& Double(double value);

  // A place in the text, to take back what was written after it.
  struct Mark {
    size_t size;
    bool need_comma;
  };
  Mark Here() const { return {out_.size(), need_comma_}; }
  void Rewind(Mark mark) {
    out_.resize(mark.size);
    need_comma_ = mark.need_comma;
  }

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

// A config::JsonOut that writes through a JsonWriter: the same text as
// printing the JsonTreeOut of the same calls with JsonResponse.
class JsonWriterOut final : public config::JsonOut {
 public:
  // Writes to `*writer`, which outlives this.
  explicit JsonWriterOut(JsonWriter* writer) : w_(*writer) {}

  void Key(absl::string_view name) override {
    before_key_ = w_.Here();
    w_.Key(name);
  }
  void String(absl::string_view value) override { w_.String(value); }
  void Int(int64_t value) override { w_.Int(value); }
  void Double(double value) override { w_.Double(value); }
  void Bool(bool value) override { w_.Bool(value); }
  void Null() override { w_.Null(); }
  void BeginObject() override;
  void EndObject() override;
  void EndObjectOrDropIfEmpty() override;
  void BeginArray() override { w_.BeginArray(); }
  void EndArray() override { w_.EndArray(); }

 private:
  struct Open {
    JsonWriter::Mark before_key;  // where the object's key began
    size_t empty_size;            // the text's size right after its '{'
  };
  JsonWriter& w_;
  JsonWriter::Mark before_key_{0, false};
  std::vector<Open> open_;
};

// Appends `value` as a JSON string literal, quotes included, to `*out` (see
// the file comment for how it is escaped).
void AppendJsonString(absl::string_view value, std::string* out);

}  // namespace chime::api

#endif  // CHIME_SRC_API_JSON_WRITER_H_
