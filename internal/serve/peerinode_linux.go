package serve

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// peerInode finds the inode of the socket at the other end of a loopback
// TCP connection: the socket whose local address is remote and remote
// address is local. The kernel finds it by that address pair when asked
// over NETLINK_SOCK_DIAG (one hash lookup); a kernel without it is read
// from /proc/net/tcp and tcp6 (every TCP socket, printed: far slower). A
// peer found in neither is gone.
func peerInode(remote, local net.Addr) (uint64, error) {
	r, ok1 := remote.(*net.TCPAddr)
	l, ok2 := local.(*net.TCPAddr)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("not a TCP connection: %v", remote)
	}
	inode, err := diagInode(r, l)
	if err == nil {
		return inode, nil
	}
	if !errors.Is(err, errNoDiag) {
		return 0, fmt.Errorf("cannot tell who connects from %v: %w", remote, err)
	}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if r.IP.To4() == nil && file == "/proc/net/tcp" {
			continue
		}
		inode, err := findSocket(file, r, l)
		if err != nil {
			return 0, err
		}
		if inode != 0 {
			return inode, nil
		}
	}
	return 0, fmt.Errorf("cannot tell who connects from %v: its socket is gone", remote)
}

// errNoDiag: this kernel answers no sock_diag request for TCP.
var errNoDiag = errors.New("no sock_diag")

// diagInode asks the kernel (sock_diag, inet_diag_req_v2 without
// NLM_F_DUMP: an exact lookup) for the inode of the TCP socket bound to r
// and connected to l; IPv4 first, then IPv6 (a dual-stack socket, where r
// is an IPv4-mapped address).
func diagInode(r, l *net.TCPAddr) (uint64, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, errNoDiag
	}
	defer unix.Close(fd)
	families := []uint8{unix.AF_INET, unix.AF_INET6}
	if r.IP.To4() == nil {
		families = families[1:]
	}
	gone := false
	for _, fam := range families {
		inode, err := diagOne(fd, fam, r, l)
		switch {
		case err == nil:
			return inode, nil
		case errors.Is(err, unix.ENOENT):
			gone = true
		default:
			return 0, errNoDiag
		}
	}
	if gone {
		return 0, errors.New("its socket is gone")
	}
	return 0, errNoDiag
}

// diagOne sends one request of family fam and reads its answer.
func diagOne(fd int, fam uint8, r, l *net.TCPAddr) (uint64, error) {
	const hdr, req = 16, 56 // nlmsghdr, inet_diag_req_v2
	var b [hdr + req]byte
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], hdr+req)
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(b[8:], 1) // seq
	q := b[hdr:]
	q[0], q[1] = fam, unix.IPPROTO_TCP
	ne.PutUint32(q[4:], ^uint32(0)) // every state
	// inet_diag_sockid: sport, dport (big endian), src[4], dst[4], if, cookie[2]
	binary.BigEndian.PutUint16(q[8:], uint16(r.Port))
	binary.BigEndian.PutUint16(q[10:], uint16(l.Port))
	putIP(q[12:28], r.IP, fam)
	putIP(q[28:44], l.IP, fam)
	ne.PutUint32(q[48:], ^uint32(0)) // INET_DIAG_NOCOOKIE
	ne.PutUint32(q[52:], ^uint32(0))
	if err := unix.Sendto(fd, b[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, err
	}
	var in [1024]byte
	n, _, err := unix.Recvfrom(fd, in[:], 0)
	if err != nil {
		return 0, err
	}
	if n < hdr+4 {
		return 0, errors.New("short sock_diag answer")
	}
	switch ne.Uint16(in[4:]) {
	case unix.NLMSG_ERROR:
		if e := int32(ne.Uint32(in[hdr:])); e != 0 {
			return 0, unix.Errno(-e)
		}
		return 0, errors.New("empty sock_diag answer")
	case unix.SOCK_DIAG_BY_FAMILY:
		// inet_diag_msg: family, state, timer, retrans, sockid (48),
		// expires, rqueue, wqueue, uid, inode
		if n < hdr+72 {
			return 0, errors.New("short sock_diag answer")
		}
		return uint64(ne.Uint32(in[hdr+68:])), nil
	}
	return 0, errors.New("unexpected sock_diag answer")
}

// putIP writes ip as inet_diag_sockid holds it: 4 bytes for IPv4, 16
// (IPv4-mapped when need be) for IPv6, network order.
func putIP(dst []byte, ip net.IP, fam uint8) {
	if fam == unix.AF_INET {
		copy(dst, ip.To4())
		return
	}
	copy(dst, ip.To16())
}

// findSocket scans one /proc/net/tcp* table for the socket bound to
// local=r and connected to remote=l; 0 when absent.
func findSocket(file string, r, l *net.TCPAddr) (uint64, error) {
	f, err := os.Open(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil // no IPv6 on this kernel
		}
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …"
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 10 || !sameAddr(fields[1], r) || !sameAddr(fields[2], l) {
			continue
		}
		return strconv.ParseUint(string(fields[9]), 10, 64)
	}
	return 0, sc.Err()
}

// sameAddr compares "HEXIP:HEXPORT" of /proc/net/tcp* with a, the IP in
// 32-bit words of the host's byte order.
func sameAddr(field []byte, a *net.TCPAddr) bool {
	ipHex, portHex, ok := bytes.Cut(field, []byte{':'})
	if !ok {
		return false
	}
	port, err := strconv.ParseUint(string(portHex), 16, 16)
	if err != nil || int(port) != a.Port {
		return false
	}
	raw := make([]byte, hex.DecodedLen(len(ipHex)))
	if _, err := hex.Decode(raw, ipHex); err != nil || (len(raw) != 4 && len(raw) != 16) {
		return false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.NativeEndian.Uint32(raw[i:]))
	}
	return ip.Equal(a.IP)
}
