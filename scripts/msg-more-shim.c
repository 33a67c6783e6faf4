/* A measurement aid for scripts/bench-serve.sh (CORK=1), not part of the
 * server: loaded into fio with LD_PRELOAD, it marks every 50-byte TLS
 * application-data record that fio's libnbd sends (an NBD request header
 * of 28 bytes, sealed) MSG_MORE, so that the kernel holds it and sends
 * it in one TCP segment with the payload record that follows, as libnbd
 * does with MSG_MORE for a plaintext write's header. libnbd's TLS send
 * (lib/crypto.c, tls_send) sends each buffer as a record at once, MSG_MORE
 * or not, so a TLS write leaves as two segments (docs/nbd-tls.md, sixth
 * round). Only for write-only runs: a
 * read's header has no payload after it, and would wait for the kernel's
 * probe timer.
 * Build: cc -O2 -shared -fPIC -o msg-more-shim.so msg-more-shim.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/socket.h>

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
  static ssize_t (*next)(int, const struct msghdr *, int);
  if (next == NULL)
    next = (ssize_t (*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
  const unsigned char *rec = msg->msg_iovlen == 1 ? msg->msg_iov[0].iov_base : NULL;
  /* Content type 23 (application data), 5-byte header + 28 + 16-byte tag
   * + 1 byte of inner content type (TLS 1.3). */
  if (rec != NULL && msg->msg_iov[0].iov_len == 50 && rec[0] == 23)
    flags |= MSG_MORE;
  return next(fd, msg, flags);
}
