#include "src/api/json_writer.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/api/http_util.h"
#include "src/time/rfc3339.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

// What JsonResponse prints for `j`, without its newline.
std::string Reference(const Json& j) {
  std::string body = JsonResponse(j).body;
  EXPECT_EQ(body.back(), '\n');
  body.pop_back();
  return body;
}

std::string Written(absl::string_view value) {
  std::string out;
  AppendJsonString(value, &out);
  return out;
}

TEST(JsonWriter, StringsAreEscapedAsNlohmannEscapesThem) {
  std::string every_control;
  for (char c = 0; c < 0x20; ++c) every_control.push_back(c);
  const std::string cases[] = {
      "",
      "plain ascii: ops/report 2026-11-30T12:00:00Z",
      "say \"hi\"",
      "C:\\path\\",
      "line\nbreak\ttab\rcr\bbs\ffeed",
      every_control,
      std::string("nul\0inside", 10),
      "del \x7f",
      "na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80",  // 2-, 3-, 4-byte UTF-8
      "bad \xff byte",
      "cut \xe2\x82",           // a sequence cut short at the end
      "cut \xe2\x82 mid",       // ... and in the middle
      "overlong \xc0\xaf",      // an overlong '/'
      "surrogate \xed\xa0\x80"  // UTF-16 surrogates are not UTF-8
  };
  for (const std::string& s : cases) {
    EXPECT_EQ(Written(s), Reference(Json(s))) << ::testing::PrintToString(s);
  }
}

TEST(JsonWriter, ScalarsPrintAsNlohmannPrintsThem) {
  const absl::Time t =
      absl::FromUnixSeconds(1'796'000'000) + absl::Nanoseconds(5);
  std::string out;
  JsonWriter w(&out);
  w.BeginObject()
      .Key("min")
      .Int(std::numeric_limits<int64_t>::min())
      .Key("max")
      .Int(std::numeric_limits<int64_t>::max())
      .Key("zero")
      .Int(0)
      .Key("umax")
      .Uint(std::numeric_limits<uint64_t>::max())
      .Key("yes")
      .Bool(true)
      .Key("no")
      .Bool(false)
      .Key("nothing")
      .Null()
      .Key("at")
      .Time(t)
      .Key("never")
      .TimeOrNull(absl::InfiniteFuture())
      .Key("since")
      .TimeOrNull(absl::InfinitePast())
      .Key("then")
      .TimeOrNull(t)
      .Key("k\"ey\n")
      .String("v")
      .EndObject();

  Json j;
  j["min"] = std::numeric_limits<int64_t>::min();
  j["max"] = std::numeric_limits<int64_t>::max();
  j["zero"] = 0;
  j["umax"] = std::numeric_limits<uint64_t>::max();
  j["yes"] = true;
  j["no"] = false;
  j["nothing"] = nullptr;
  j["at"] = time::FormatUtc(t);
  j["never"] = nullptr;
  j["since"] = nullptr;
  j["then"] = time::FormatUtc(t);
  j["k\"ey\n"] = "v";
  EXPECT_EQ(out, Reference(j));
}

TEST(JsonWriter, NestingPutsCommasOnlyBetweenElements) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("empty_object").BeginObject().EndObject();
  w.Key("empty_array").BeginArray().EndArray();
  w.Key("runs").BeginArray();
  for (int i = 0; i < 3; ++i) {
    w.BeginObject().Key("id").Int(i).Key("tags").BeginArray();
    w.String("a").BeginArray().EndArray().Null().EndArray().EndObject();
  }
  w.EndArray().Key("next_cursor").Null().EndObject();

  Json j;
  j["empty_object"] = Json::object();
  j["empty_array"] = Json::array();
  j["runs"] = Json::array();
  for (int i = 0; i < 3; ++i) {
    Json run;
    run["id"] = i;
    run["tags"] = Json::array({"a", Json::array(), nullptr});
    j["runs"].push_back(run);
  }
  j["next_cursor"] = nullptr;
  EXPECT_EQ(out, Reference(j));
}

TEST(JsonWriter, AppendsToWhatIsThere) {
  std::string out = "prefix ";
  JsonWriter w(&out);
  w.BeginArray().Int(1).String("two").EndArray();
  EXPECT_EQ(out, "prefix [1,\"two\"]");
}

// The same calls to both JsonOuts; `{}` members ended with
// EndObjectOrDropIfEmpty go, with their keys and commas.
void Produce(config::JsonOut& out) {
  out.BeginObject();
  out.Key("empty");
  out.BeginObject();
  out.EndObjectOrDropIfEmpty();
  out.Key("a");
  out.Int(-7);
  out.Key("nested");
  out.BeginObject();
  out.Key("inner");
  out.BeginObject();
  out.EndObjectOrDropIfEmpty();
  out.EndObjectOrDropIfEmpty();
  out.Key("kept");
  out.BeginObject();
  out.Key("x");
  out.Bool(true);
  out.EndObjectOrDropIfEmpty();
  out.Key("list");
  out.BeginArray();
  out.Double(2.5);
  out.Double(0.1);
  out.Null();
  out.String("\u00e9\"\n");
  out.BeginObject();
  out.EndObject();
  out.EndArray();
  out.Key("last");
  out.BeginObject();
  out.EndObjectOrDropIfEmpty();
  out.EndObject();
}

TEST(JsonWriterOut, WritesWhatTheTreeOfTheSameCallsPrints) {
  const std::string want =
      "{\"a\":-7,\"kept\":{\"x\":true},"
      "\"list\":[2.5,0.1,null,\"\u00e9\\\"\\n\",{}]}";
  Json tree;
  config::JsonTreeOut tree_out(&tree);
  Produce(tree_out);
  EXPECT_EQ(Reference(tree), want);

  std::string text;
  JsonWriter w(&text);
  JsonWriterOut text_out(&w);
  Produce(text_out);
  EXPECT_EQ(text, want);
}

}  // namespace
}  // namespace chime::api
