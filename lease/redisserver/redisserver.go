// Package redisserver starts a throwaway redis-server (Debian's package) for
// tests and explore real: on 127.0.0.1 only, on a spare port, with no
// persistence, in a temporary directory, as a non-root user when run as
// root (nobody), killed with this process if it dies.
package redisserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is a running redis-server.
type Server struct {
	Addr string // host:port
	dir  string
	cmd  *exec.Cmd
	done chan error
	once sync.Once
}

// Binary finds redis-server on PATH or in /usr/bin; "" if none.
func Binary() string {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	if st, err := os.Stat("/usr/bin/redis-server"); err == nil && st.Mode().IsRegular() {
		return "/usr/bin/redis-server"
	}
	return ""
}

// Install installs Debian's redis-server package (needs root).
func Install(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return errors.New("redisserver: not root, cannot apt-get install redis-server")
	}
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "--no-install-recommends", "redis-server"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// Start starts a server (installing the package first when missing, as
// root) and returns once it accepts connections.
func Start(ctx context.Context) (*Server, error) {
	bin := Binary()
	if bin == "" {
		if err := Install(ctx); err != nil {
			return nil, err
		}
		if bin = Binary(); bin == "" {
			return nil, errors.New("redisserver: redis-server installed but not found")
		}
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fencecheck-redis-")
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		s, err := start(ctx, bin, dir, cred)
		if err == nil || attempt == 4 {
			if err != nil {
				os.RemoveAll(dir)
			}
			return s, err
		}
	}
}

func start(ctx context.Context, bin, dir string, cred *syscall.Credential) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	s := &Server{Addr: "127.0.0.1:" + port, dir: dir, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--protected-mode", "yes",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	s.cmd.Dir = dir
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = s.cmd.Stdout
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("redisserver: starting %s: %w", bin, err)
	}
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if log.Len() < 8<<10 {
				log.WriteString(sc.Text() + "\n")
			}
		}
		s.done <- s.cmd.Wait()
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err == nil {
			fmt.Fprint(conn, "PING\r\n")
			conn.SetReadDeadline(time.Now().Add(time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			if strings.HasPrefix(line, "+PONG") {
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("redisserver: redis-server exited: %v\n%s", err, log.String())
		case <-ctx.Done():
			s.kill()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return nil, fmt.Errorf("redisserver: redis-server not answering on %s", s.Addr)
		}
	}
}

func (s *Server) kill() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
}

// Stop kills the server and removes its directory; it may be called again.
func (s *Server) Stop() error {
	s.kill()
	return os.RemoveAll(s.dir)
}
