// The TLS instantiation of connection.h (its own file: see there).
#include "serve.h"

#include "connection.h"

namespace ferry::s3server {

boost::asio::awaitable<void> ServeTls(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context& tls,
                                      Service& service, const ServerOptions& options) {
  using connection_detail::beast::tcp_stream;
  using TlsStream = connection_detail::beast::ssl_stream<tcp_stream>;
  connection_detail::Connection<TlsStream> c(TlsStream(tcp_stream(std::move(socket)), tls), service, options);
  co_await c.Run();
}

}  // namespace ferry::s3server
