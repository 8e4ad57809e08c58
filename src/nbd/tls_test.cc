// NBD over TLS (NBD_OPT_STARTTLS) against clients we did not write:
// libnbd's nbdinfo (nbds://, GnuTLS) and qemu-img (tls-creds-x509). Keys
// and certificates are made with the openssl command line for each run: a
// CA, a server certificate for 127.0.0.1 it signed, a client certificate it
// signed, and a second CA that signed nothing of ours.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "base/test_shell.h"
#include "base/test_temp_dir.h"
#include "nbd/file_device.h"
#include "nbd/server.h"

namespace ferry::nbd {
namespace {

namespace fs = std::filesystem;

// A CA in `dir` (ca-cert.pem, ca-key.pem) and, signed by it, `name`-cert.pem
// and `name`-key.pem for 127.0.0.1: the layout libnbd and qemu read.
bool MakeCa(const std::string& dir) {
  fs::create_directories(dir);
  return Shell("cd " + dir +
               " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca-cert.pem -days 2 "
               "-subj /CN=ferry-test-ca")
             .code == 0;
}
bool Sign(const std::string& ca_dir, const std::string& out_dir, const std::string& name) {
  fs::create_directories(out_dir);
  std::ofstream(out_dir + "/" + name + ".ext") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                                << "extendedKeyUsage=serverAuth,clientAuth\n";
  return Shell("cd " + out_dir + " && openssl req -newkey rsa:2048 -nodes -keyout " + name + "-key.pem -out " + name +
               ".csr -subj /CN=localhost && openssl x509 -req -in " + name + ".csr -CA " + ca_dir +
               "/ca-cert.pem -CAkey " + ca_dir + "/ca-key.pem -CAcreateserial -days 2 -out " + name +
               "-cert.pem -extfile " + name + ".ext")
             .code == 0;
}

class NbdTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTool("nbdinfo") || !HaveTool("qemu-img") || !HaveTool("openssl")) {
      FERRY_SKIP_WITHOUT_PEER("libnbd-bin / qemu-utils / openssl not installed (make setup)");
    }
    ca_ = dir_ / "ca";
    ASSERT_TRUE(MakeCa(ca_));
    ASSERT_TRUE(Sign(ca_, ca_, "server"));
    // What a client holds: the CA, and its own certificate (signed by the CA).
    client_ = dir_ / "client";
    ASSERT_TRUE(Sign(ca_, client_, "client"));
    fs::copy_file(ca_ + "/ca-cert.pem", client_ + "/ca-cert.pem");
    // A client that trusts another CA.
    stranger_ = dir_ / "stranger";
    ASSERT_TRUE(MakeCa(stranger_));
    std::string bytes(1 << 20, '\0');
    std::mt19937_64 rng(3);
    for (auto& c : bytes) c = static_cast<char>(rng());
    disk_ = dir_ / "disk.img";
    std::ofstream(disk_, std::ios::binary) << bytes;
  }
  std::unique_ptr<NbdServer> Serve(TlsMode mode, bool client_certs) {
    NbdServerOptions o;
    o.listen = "127.0.0.1:0";
    o.tls.mode = mode;
    o.tls.cert_file = ca_ + "/server-cert.pem";
    o.tls.key_file = ca_ + "/server-key.pem";
    if (client_certs) o.tls.ca_file = ca_ + "/ca-cert.pem";
    auto s = std::make_unique<NbdServer>(o);
    auto dev = FileDevice::Open(disk_, 0, false);
    EXPECT_TRUE(dev.ok());
    s->AddExport("disk", std::shared_ptr<BlockDevice>(std::move(dev).value()));
    EXPECT_TRUE(s->Start().ok());
    return s;
  }
  std::string Plain(const NbdServer& s) { return "nbd://127.0.0.1:" + std::to_string(s.port()) + "/disk"; }
  std::string Tls(const NbdServer& s, const std::string& certs) {
    return "'nbds://127.0.0.1:" + std::to_string(s.port()) + "/disk?tls-certificates=" + certs + "'";
  }
  TestTempDir dir_;
  std::string ca_, client_, stranger_, disk_;
};

TEST_F(NbdTlsTest, RequireRefusesPlainClientsAndServesTlsOnes) {
  auto s = Serve(TlsMode::kRequire, false);
  ShellRun plain = Shell("nbdinfo --size " + Plain(*s));
  EXPECT_NE(plain.code, 0) << plain.out;
  ShellRun tls = Shell("nbdinfo --size " + Tls(*s, client_));
  ASSERT_EQ(tls.code, 0) << tls.out;
  EXPECT_EQ(tls.out, "1048576\n");
  // qemu's client, with the bytes compared.
  std::string copy = dir_ / "copy.raw";
  ShellRun conv = Shell("qemu-img convert --object tls-creds-x509,id=tls0,dir=" + client_ +
                        ",endpoint=client --image-opts driver=nbd,host=127.0.0.1,port=" + std::to_string(s->port()) +
                        ",export=disk,tls-creds=tls0 -O raw " + copy);
  ASSERT_EQ(conv.code, 0) << conv.out;
  EXPECT_EQ(ReadWholeFile(copy), ReadWholeFile(disk_));
}

TEST_F(NbdTlsTest, AClientTrustingAnotherCaRefusesTheServer) {
  auto s = Serve(TlsMode::kRequire, false);
  ShellRun wrong = Shell("nbdinfo --size " + Tls(*s, stranger_));
  EXPECT_NE(wrong.code, 0) << wrong.out;
  // The server goes on serving.
  EXPECT_EQ(Shell("nbdinfo --size " + Tls(*s, client_)).out, "1048576\n");
}

TEST_F(NbdTlsTest, OnServesBothAndClientCertificatesAreChecked) {
  auto on = Serve(TlsMode::kOn, false);
  EXPECT_EQ(Shell("nbdinfo --size " + Plain(*on)).out, "1048576\n");
  EXPECT_EQ(Shell("nbdinfo --size " + Tls(*on, client_)).out, "1048576\n");
  // With --tls-ca: a client must show a certificate the CA signed.
  auto strict = Serve(TlsMode::kRequire, true);
  EXPECT_EQ(Shell("nbdinfo --size " + Tls(*strict, client_)).out, "1048576\n");
  std::string anonymous = dir_ / "anonymous";  // trusts the CA, has no certificate
  fs::create_directories(anonymous);
  fs::copy_file(ca_ + "/ca-cert.pem", anonymous + "/ca-cert.pem");
  EXPECT_NE(Shell("nbdinfo --size " + Tls(*strict, anonymous)).code, 0);
}

TEST_F(NbdTlsTest, SetupErrorsAreOneLine) {
  NbdServerOptions o;
  o.listen = "127.0.0.1:0";
  o.tls.mode = TlsMode::kRequire;
  Status no_cert = NbdServer(o).Start();
  EXPECT_EQ(no_cert.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(no_cert.message().find("--tls-cert"), std::string::npos) << no_cert.ToString();
  o.tls.cert_file = ca_ + "/server-cert.pem";
  o.tls.key_file = stranger_ + "/ca-key.pem";  // not the certificate's key
  Status mismatch = NbdServer(o).Start();
  EXPECT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.ToString().find('\n'), std::string::npos);
  EXPECT_FALSE(ParseTlsMode("maybe").ok());
  EXPECT_EQ(*ParseTlsMode("require"), TlsMode::kRequire);
}

}  // namespace
}  // namespace ferry::nbd
