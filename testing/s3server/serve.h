#pragma once
// Serving one accepted connection, plain or TLS, until it ends (server.cc's
// accept loop spawns one of these a connection).

#include <utility>  // before Boost.Asio under g++ 12

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "server.h"
#include "service.h"

namespace ferry::s3server {

boost::asio::awaitable<void> ServePlain(boost::asio::ip::tcp::socket socket, Service& service,
                                        const ServerOptions& options);
boost::asio::awaitable<void> ServeTls(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context& tls,
                                      Service& service, const ServerOptions& options);

}  // namespace ferry::s3server
