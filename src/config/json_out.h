// JsonOut: where a JSON value goes as it is produced, one member at a time,
// so that one mapping from chime's types to JSON (job_writer.h's
// WriteJobJson) serves both an nlohmann tree (JsonTreeOut, below: for
// callers that go on to edit the value or print it as YAML) and text written
// straight out (api::JsonWriterOut: for hot answers, without a heap node per
// field).
//
// A producer calls, for {"a":1,"b":[true]}:
//   out.BeginObject(); out.Key("a"); out.Int(1);
//   out.Key("b"); out.BeginArray(); out.Bool(true); out.EndArray();
//   out.EndObject();
// Every value inside an object follows its Key; the caller keeps the nesting
// well formed and writes no key twice in one object (implementations do not
// check either).
//
// Thread-safety: none; one producer per JsonOut.
#ifndef CHIME_SRC_CONFIG_JSON_OUT_H_
#define CHIME_SRC_CONFIG_JSON_OUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace chime::config {

class JsonOut {
 public:
  virtual ~JsonOut() = default;

  // In an object: the name of the value that comes next.
  virtual void Key(absl::string_view name) = 0;
  virtual void String(absl::string_view value) = 0;
  virtual void Int(int64_t value) = 0;
  // As nlohmann prints a double (a non-finite one as null).
  virtual void Double(double value) = 0;
  virtual void Bool(bool value) = 0;
  virtual void Null() = 0;
  virtual void BeginObject() = 0;
  virtual void EndObject() = 0;
  // Ends an object that is a member of an object; if it got no members, it
  // is taken back with its key, as if neither had been written.
  virtual void EndObjectOrDropIfEmpty() = 0;
  virtual void BeginArray() = 0;
  virtual void EndArray() = 0;
};

// Builds an nlohmann::ordered_json value. The root is `*root`, which must
// outlive this and is complete once its outermost value has ended.
class JsonTreeOut final : public JsonOut {
 public:
  explicit JsonTreeOut(nlohmann::ordered_json* root) : root_(*root) {}

  void Key(absl::string_view name) override {
    key_.assign(name.data(), name.size());
  }
  void String(absl::string_view value) override { Slot() = std::string(value); }
  void Int(int64_t value) override { Slot() = value; }
  void Double(double value) override { Slot() = value; }
  void Bool(bool value) override { Slot() = value; }
  void Null() override { Slot() = nullptr; }
  void BeginObject() override { Open(nlohmann::ordered_json::object()); }
  void EndObject() override { open_.pop_back(); }
  void EndObjectOrDropIfEmpty() override;
  void BeginArray() override { Open(nlohmann::ordered_json::array()); }
  void EndArray() override { open_.pop_back(); }

 private:
  struct Frame {
    nlohmann::ordered_json* node;
    std::string key;  // its key in the enclosing object ("" elsewhere)
  };
  // Where the next value goes: the root, the pending key's member of the
  // innermost object, or a new element of the innermost array.
  nlohmann::ordered_json& Slot();
  void Open(nlohmann::ordered_json empty);

  nlohmann::ordered_json& root_;
  std::vector<Frame> open_;
  std::string key_;
};

}  // namespace chime::config

#endif  // CHIME_SRC_CONFIG_JSON_OUT_H_
