#include "router.h"

namespace ferry::s3server {

Result<S3Target> Route(const HttpRequest& req) {
  return s3::Route(s3::RouteInput{req.method, req.target, req.HeaderOr("host"),
                                  req.Header("x-amz-copy-source") != nullptr});
}

}  // namespace ferry::s3server
