// HttpServer: the daemon's HTTP/1.1 listener. `/metrics`, `/healthz` and
// `/readyz` now; the REST API and the web UI later, through the same Router.
//
// A small fixed pool of threads (Boost.Asio) accepts connections, reads
// requests, calls the Router and writes responses. With blocking_threads,
// handlers run on a pool of their own unless registered to run inline
// (RouteOptions: quick ones, which then cost no hand-off between threads);
// without, every handler runs on the I/O threads, and one that blocks holds
// one up. A handler that must wait for something -- a durable write -- can
// answer later instead (deferred_response.h): the connection then waits
// without a thread, for at most write_timeout (then 503).
//
// Connections are persistent (HTTP/1.1 keep-alive) unless the client says
// otherwise. The server answers on its own:
//   400  a malformed request (the connection is then closed),
//   413  a body over max_body_bytes (closed),
//   431  a request line and headers over max_header_bytes (closed),
//   503  a connection beyond max_connections (closed at once),
//   and 404 / 405 / 500 through the Router.
// Every read of a request, including the wait for the next one on an idle
// keep-alive connection, must complete within read_timeout, and every write
// within write_timeout; otherwise the connection is closed. A slow or idle
// client therefore costs a socket and a buffer, never a thread, and not for
// longer than the timeout.
//
// A handler may answer with a body produced over time (Response::stream,
// response_stream.h): the server sends the head at once and then what the
// producer writes, in chunks, as fast as the client reads; a client more than
// the stream's bound behind is disconnected. read_timeout does not apply
// while a response streams (write_timeout applies to each write), the
// connection closes after it, and Stop() ends every stream (the producers'
// writes fail from then on).
//
// Pipelined requests are answered one at a time, in order. Not supported:
// HTTP/2, `Expect: 100-continue` (a client that waits for the interim
// response sends the body after its own delay).
//
// With a certificate and key in the options the listener speaks HTTPS only
// (TLS 1.2 or later) and all of the above holds inside TLS (the 503 follows
// the handshake). The handshake is a read: it must complete within
// read_timeout. A client that does not speak TLS (plain HTTP, say) is closed
// without an answer. The files are read once, at Start: a renewed
// certificate takes a new server.
//
// Thread-safety: port() and Stop() may be called from any thread except a
// pool thread (a handler must not call Stop: it would wait for itself).
#ifndef CHIME_SRC_HTTP_SERVER_H_
#define CHIME_SRC_HTTP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "src/http/router.h"

namespace chime::http {

class HttpServer {
 public:
  struct Options {
    // An IPv4 or IPv6 literal: "127.0.0.1", "::1", "0.0.0.0".
    std::string address = "127.0.0.1";
    // 0 picks a free port; port() tells which.
    uint16_t port = 0;
    // Threads that read requests and write responses, and run the handlers
    // registered to run inline (RouteOptions). REQUIRES: >= 1.
    int threads = 2;
    // Threads for the other handlers, which may block; 0: they run on the
    // threads above too. REQUIRES: >= 0.
    int blocking_threads = 0;
    // The request line and headers, together.
    size_t max_header_bytes = 16 * 1024;
    size_t max_body_bytes = 1024 * 1024;
    // See the file comment. REQUIRES: > 0.
    absl::Duration read_timeout = absl::Seconds(30);
    absl::Duration write_timeout = absl::Seconds(30);
    // Open connections at most; one more is answered 503 and closed.
    // REQUIRES: >= 1.
    int max_connections = 256;
    // PEM files: the certificate chain (the server's certificate first, then
    // any intermediates) and its unencrypted private key. Both set: HTTPS;
    // both empty: plain HTTP.
    std::string tls_cert_file;
    std::string tls_key_file;
    Router router;
  };

  // Binds, listens and starts the pool. Errors: InvalidArgument for an
  // address that is not an IP literal or an option out of range, for only
  // one of the TLS files, and for a TLS file that cannot be read, holds no
  // certificate (key), or a key that is not the certificate's (the message
  // names the file);
  // Unavailable when the address and port are in use or not available here;
  // PermissionDenied for a privileged port; Internal otherwise. Each message
  // names the address and port.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(Options options);

  // Stop()s.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port listened on (the one picked when Options::port was 0).
  uint16_t port() const;

  // Closes the listener and every connection, abandoning requests and
  // responses in progress (streamed ones end: see response_stream.h;
  // deferred answers given later are dropped; handlers queued for the
  // blocking pool do not run), and joins the threads. Returns once a handler
  // running now has returned.
  // Idempotent.
  void Stop();

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace chime::http

#endif  // CHIME_SRC_HTTP_SERVER_H_
