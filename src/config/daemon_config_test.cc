#include "src/config/daemon_config.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::config {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

TEST(DaemonConfigTest, DefaultsMakeAWorkingDaemon) {
  const DaemonConfig c;
  EXPECT_EQ(c.data_dir, "chime-data");
  EXPECT_EQ(c.jobs_dir, "jobs");
  EXPECT_EQ(c.listen, "127.0.0.1:8712");
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());
}

TEST(DaemonConfigTest, SharedStoreSettingsAreBounded) {
  DaemonConfig c;
  c.max_clock_skew = absl::Hours(2);
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "max_clock_skew: 2h is outside 10ms..1h"));
  c.max_clock_skew = absl::Milliseconds(10);
  c.node_name = "node 1";
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node_name: \"node 1\" is not a name")));
  c.node_name = "node-1.eu_west";
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());
  c.advertise_url = "10.0.0.5:8712";
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "advertise_url: \"10.0.0.5:8712\" is not an http:// "
                       "or https:// URL"));
  c.advertise_url = "https://node-1.internal:8712";
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());
  c.lease_ttl = absl::Milliseconds(500);
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "lease_ttl: 500ms is outside 1s..10m"));
}

TEST(DaemonConfigTest, ShardsNeedASharedStore) {
  DaemonConfig c;
  // The default (64 on a shared store) does not apply to one daemon's own.
  EXPECT_EQ(c.shards, 64u);
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());
  ASSERT_THAT(ApplyConfigFile("chime.yaml", "shards: 8\n", &c), IsOk());
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("shards: needs a shared store")));
  c.store = "postgresql://chime@db/chime";
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "shards: 5000\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("shards")));
}

TEST(DaemonConfigTest, FileSetsEveryKey) {
  DaemonConfig c;
  ASSERT_THAT(ApplyConfigFile("chime.yaml", R"(
data_dir: /var/lib/chime
store: postgresql://chime@db.internal/chime
lease_ttl: 10s
max_clock_skew: 250ms
shards: 16
node_name: node-7
advertise_url: http://10.0.0.7:9000
jobs_dir: /etc/chime/jobs
listen: "[::1]:9000"
max_concurrent_runs: 8
max_losses: 5
shutdown_grace: 1m30s
log_format: json
log_level: debug
history_keep_per_job: 50
history_max_age: 2d
history_check_interval: 30s
tls:
  cert: /etc/chime/tls.crt
  key: tls.key
)",
                              &c),
              IsOk());
  EXPECT_EQ(c.data_dir, "/var/lib/chime");
  EXPECT_EQ(c.store, "postgresql://chime@db.internal/chime");
  EXPECT_EQ(c.lease_ttl, absl::Seconds(10));
  EXPECT_EQ(c.max_clock_skew, absl::Milliseconds(250));
  EXPECT_EQ(c.shards, 16u);
  EXPECT_EQ(c.node_name, "node-7");
  EXPECT_EQ(c.advertise_url, "http://10.0.0.7:9000");
  EXPECT_EQ(c.jobs_dir, "/etc/chime/jobs");
  EXPECT_EQ(c.listen, "[::1]:9000");
  EXPECT_EQ(c.max_concurrent_runs, 8);
  EXPECT_EQ(c.max_losses, 5);
  EXPECT_EQ(c.shutdown_grace, absl::Seconds(90));
  EXPECT_EQ(c.log_format, "json");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.history_keep_per_job, 50);
  EXPECT_EQ(c.history_max_age, absl::Hours(48));
  EXPECT_EQ(c.history_check_interval, absl::Seconds(30));
  EXPECT_EQ(c.tls_cert, "/etc/chime/tls.crt");
  EXPECT_EQ(c.tls_key, "tls.key");  // as given: relative to the daemon's cwd
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());
  EXPECT_THAT(ApplyConfigFile("empty.yaml", "", &c), IsOk());
}

TEST(DaemonConfigTest, TlsFromEachLayerAndItsErrors) {
  DaemonConfig c;
  ASSERT_THAT(
      ApplyConfigFile("chime.yaml", "tls: {cert: a.crt, key: a.key}\n", &c),
      IsOk());
  std::map<std::string, std::string> env = {{"CHIME_TLS_CERT", "/env.crt"}};
  const auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ASSERT_THAT(ApplyEnvironment(getenv, &c), IsOk());
  EXPECT_EQ(c.tls_cert, "/env.crt");
  EXPECT_EQ(c.tls_key, "a.key");
  ASSERT_THAT(ApplyFlags({{"tls_key", "/flag.key"}}, &c), IsOk());
  EXPECT_EQ(c.tls_key, "/flag.key");
  EXPECT_THAT(ApplyFlags({{"tls_cert", ""}}, &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--tls-cert: must not be empty"));
  env["CHIME_TLS_KEY"] = "";
  EXPECT_THAT(ApplyEnvironment(getenv, &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "CHIME_TLS_KEY: must not be empty"));
  // In the file, only as tls: {cert, key}.
  EXPECT_THAT(
      ApplyFlags({{"tls", "x"}}, &c),
      StatusIs(absl::StatusCode::kInvalidArgument, "--tls: not a setting"));
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "tls_cert: /x\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("chime.yaml:1:1: unknown key \"tls_cert\"")));
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "tls: /x.crt\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("chime.yaml:1:6: tls: expected a mapping of "
                                 "cert and key")));
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "tls:\n  cert: a\n  crt: b\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("chime.yaml:3:3: tls: unknown key \"crt\" "
                                 "(did you mean \"cert\"?)")));
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "tls:\n  cert: \"\"\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tls.cert: must not be empty")));
  EXPECT_EQ(c.tls_cert, "/env.crt");  // unchanged by the failures
  EXPECT_EQ(c.tls_key, "/flag.key");
}

TEST(DaemonConfigTest, TlsNeedsBothFilesAndDoesNotOpenTheListener) {
  DaemonConfig c;
  c.tls_cert = "tls.crt";
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "tls: cert is set but key is not (give both for HTTPS, "
                       "neither for HTTP)"));
  c.tls_cert.clear();
  c.tls_key = "tls.key";
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tls: key is set but cert is not")));
  c.tls_cert = "tls.crt";
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());
  // HTTPS on the network still needs api_tokens.
  c.listen = "0.0.0.0:8712";
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is not a loopback address, and no "
                                 "api_tokens are configured")));
}

TEST(DaemonConfigTest, FileErrorsNamePlaceAndKeyAndChangeNothing) {
  DaemonConfig c;
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "data_dir: /x\nlistn: 1\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("chime.yaml:2:1: ")));
  EXPECT_THAT(
      ApplyConfigFile("chime.yaml", "data_dir: /x\nlog_level: loud\n", &c),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("chime.yaml:2:12: log_level: \"loud\" is not one of "
                         "debug, info, warn, error")));
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "max_concurrent_runs: 0\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("chime.yaml:1:22: max_concurrent_runs: ")));
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "max_losses: -1\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("chime.yaml:1:13: max_losses: ")));
  EXPECT_THAT(ApplyConfigFile("chime.yaml", "listen: localhost\n", &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("chime.yaml:1:9: listen: \"localhost\" is "
                                 "not host:port")));
  EXPECT_THAT(
      ApplyConfigFile("chime.yaml", "data_dir: [1\n", &c),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("chime.yaml:")));
  EXPECT_EQ(c, DaemonConfig{});  // nothing applied
}

TEST(DaemonConfigTest, EnvironmentOverridesAndNamesTheVariable) {
  std::map<std::string, std::string> env = {{"CHIME_DATA_DIR", "/data"},
                                            {"CHIME_SHUTDOWN_GRACE", "5s"},
                                            {"CHIME_MAX_CONCURRENT_RUNS", "3"},
                                            {"HOME", "/root"}};
  const auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  DaemonConfig c;
  c.data_dir = "from-file";
  ASSERT_THAT(ApplyEnvironment(getenv, &c), IsOk());
  EXPECT_EQ(c.data_dir, "/data");
  EXPECT_EQ(c.shutdown_grace, absl::Seconds(5));
  EXPECT_EQ(c.max_concurrent_runs, 3);
  env["CHIME_SHUTDOWN_GRACE"] = "soon";
  EXPECT_THAT(ApplyEnvironment(getenv, &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("CHIME_SHUTDOWN_GRACE: ")));
}

TEST(DaemonConfigTest, FlagsReadValuesAsTheFileDoesAndNameTheFlag) {
  DaemonConfig c;
  ASSERT_THAT(ApplyFlags({{"shutdown_grace", "1d"},
                          {"max_concurrent_runs", "7"},
                          {"data_dir", "/d"}},
                         &c),
              IsOk());
  EXPECT_EQ(c.shutdown_grace, absl::Hours(24));
  EXPECT_EQ(c.max_concurrent_runs, 7);
  EXPECT_EQ(c.data_dir, "/d");
  EXPECT_THAT(ApplyFlags({{"shutdown_grace", "soon"}}, &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--shutdown-grace: ")));
  EXPECT_THAT(ApplyFlags({{"nope", "1"}}, &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--nope: not a setting")));
  EXPECT_EQ(c.shutdown_grace, absl::Hours(24));  // unchanged by the failures
}

TEST(DaemonConfigTest, ApiTokensFromTheFileInlineOrFromAFile) {
  const std::string secret_file =
      ::testing::TempDir() + "/chime_daemon_config_test.token";
  {
    std::FILE* f = std::fopen(secret_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("s3cr3t-from-a-file-0123\n", f);
    std::fclose(f);
  }
  DaemonConfig c;
  ASSERT_THAT(ApplyConfigFile("chime.yaml",
                              absl::StrCat(R"(
listen: 0.0.0.0:8712
api_tokens:
  - name: ci
    role: write
    token: "0123456789abcdef-ci"
  - name: ops
    role: admin
    token_file: )",
                                           secret_file, R"(
  - name: grafana
    token: "0123456789abcdef-ro"
)"),
                              &c),
              IsOk());
  ASSERT_EQ(c.api_tokens.size(), 3u);
  EXPECT_EQ(c.api_tokens[0].name, "ci");
  EXPECT_EQ(c.api_tokens[0].role, ApiToken::Role::kWrite);
  EXPECT_EQ(c.api_tokens[1].token, "s3cr3t-from-a-file-0123");
  EXPECT_EQ(c.api_tokens[1].role, ApiToken::Role::kAdmin);
  EXPECT_EQ(c.api_tokens[2].role, ApiToken::Role::kRead);  // the default
  // With tokens, a non-loopback address is allowed.
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());
}

TEST(DaemonConfigTest, BadTokensAreRefusedByPlace) {
  const auto error = [](const std::string& tokens) {
    DaemonConfig c;
    absl::Status s =
        ApplyConfigFile("chime.yaml", "api_tokens:\n" + tokens, &c);
    EXPECT_TRUE(c.api_tokens.empty());
    return std::string(s.message());
  };
  EXPECT_THAT(error("  - name: a\n    token: short\n"),
              HasSubstr("chime.yaml:3:12: api_tokens[0].token: a token needs "
                        "at least 16 characters"));
  EXPECT_THAT(error("  - name: a\n"),
              HasSubstr("give exactly one of token, token_file"));
  EXPECT_THAT(error("  - name: a\n    role: root\n    token: "
                    "0123456789abcdef\n"),
              HasSubstr("\"root\" is not one of read, write, admin"));
  EXPECT_THAT(error("  - name: a\n    token: 0123456789abcdef\n"
                    "  - name: a\n    token: 0123456789abcdeg\n"),
              HasSubstr("a token of this name is given above"));
  EXPECT_THAT(error("  - name: a\n    token: 0123456789abcdef\n"
                    "  - name: b\n    token: 0123456789abcdef\n"),
              HasSubstr("the same secret as token \"a\""));
  EXPECT_THAT(error("  - name: a\n    token_file: /nonexistent/x\n"),
              HasSubstr("/nonexistent/x: cannot open"));
  // Not from the environment or the command line.
  DaemonConfig c;
  EXPECT_THAT(ApplyFlags({{"api_tokens", "x"}}, &c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--api_tokens: not a setting"));
}

TEST(DaemonConfigTest, ApiJobLimitsFromTheFileWithErrorsByPlace) {
  DaemonConfig c;
  ASSERT_THAT(ApplyConfigFile("chime.yaml",
                              "api_jobs:\n"
                              "  allowed_commands: [/usr/local/bin/*, /opt/x]\n"
                              "  allowed_http_hosts:\n"
                              "    - api.internal\n"
                              "    - \"*.svc.example.com\"\n"
                              "  run_as: nobody\n",
                              &c),
              IsOk());
  EXPECT_EQ(c.api_jobs.allowed_commands,
            (std::vector<std::string>{"/usr/local/bin/*", "/opt/x"}));
  EXPECT_EQ(c.api_jobs.allowed_http_hosts,
            (std::vector<std::string>{"api.internal", "*.svc.example.com"}));
  EXPECT_EQ(c.api_jobs.run_as, "nobody");
  EXPECT_THAT(ValidateDaemonConfig(c), IsOk());

  const auto error = [](const std::string& text) {
    DaemonConfig c;
    absl::Status s = ApplyConfigFile("chime.yaml", "api_jobs:\n" + text, &c);
    EXPECT_TRUE(c.api_jobs.empty());
    return std::string(s.message());
  };
  EXPECT_THAT(error("  allowed_commands: [/bin/true, tool]\n"),
              HasSubstr("chime.yaml:2:33: api_jobs.allowed_commands[1]: "
                        "\"tool\" is not an absolute path pattern"));
  EXPECT_THAT(error("  allowed_http_hosts:\n    - ok\n    - http://x/\n"),
              HasSubstr("chime.yaml:4:7: api_jobs.allowed_http_hosts[1]: "
                        "\"http://x/\" is not host, host:port or *.domain"));
  EXPECT_THAT(error("  run_as: \":wheel\"\n"),
              HasSubstr("api_jobs.run_as: give a user, or user:group"));
  EXPECT_THAT(error("  allow: everything\n"), HasSubstr("allow"));
  // A user that does not exist stops the daemon from starting.
  c.api_jobs.run_as = "no-such-user-chime";
  EXPECT_THAT(ValidateDaemonConfig(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("api_jobs.run_as: no such user")));
  // Not from the environment or the command line.
  EXPECT_THAT(ApplyFlags({{"api_jobs", "x"}}, &c),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(DaemonConfigTest, WithoutTokensOnlyLoopbackIsAllowed) {
  for (const char* listen :
       {"127.0.0.1:1", "127.0.0.53:1", "[::1]:1", "localhost:1"}) {
    DaemonConfig c;
    c.listen = listen;
    EXPECT_THAT(ValidateDaemonConfig(c), IsOk()) << listen;
  }
  for (const char* listen :
       {"0.0.0.0:8712", "[::]:8712", "10.1.2.3:80", "example.com:80"}) {
    DaemonConfig c;
    c.listen = listen;
    EXPECT_THAT(ValidateDaemonConfig(c),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("is not a loopback address, and no "
                                   "api_tokens are configured")))
        << listen;
  }
}

TEST(DaemonConfigTest, SplitHostPort) {
  std::string host;
  int port = -1;
  ASSERT_THAT(SplitHostPort("127.0.0.1:0", &host, &port), IsOk());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 0);
  ASSERT_THAT(SplitHostPort("[::1]:8712", &host, &port), IsOk());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 8712);
  EXPECT_FALSE(SplitHostPort("127.0.0.1", &host, &port).ok());
  EXPECT_FALSE(SplitHostPort("127.0.0.1:70000", &host, &port).ok());
  EXPECT_FALSE(SplitHostPort("[::1]8712", &host, &port).ok());
}

}  // namespace
}  // namespace chime::config
