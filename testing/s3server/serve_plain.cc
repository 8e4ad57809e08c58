// The plain-TCP instantiation of connection.h (its own file: see there).
#include "serve.h"

#include "connection.h"

namespace ferry::s3server {

boost::asio::awaitable<void> ServePlain(boost::asio::ip::tcp::socket socket, Service& service,
                                        const ServerOptions& options) {
  using connection_detail::beast::tcp_stream;
  connection_detail::Connection<tcp_stream> c(tcp_stream(std::move(socket)), service, options);
  co_await c.Run();
}

}  // namespace ferry::s3server
