package realdb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The PostgreSQL the tests use: FENCECHECK_POSTGRES_DSN if set, otherwise a
// throwaway cluster of Debian's server binaries (installed with apt-get when
// missing and running as root), run as a non-root user, listening only on a
// unix socket in its own temporary directory, and removed when the tests end.

var pg struct {
	once    sync.Once
	dsn     string
	skip    string // why there is no PostgreSQL
	cluster *pgCluster
}

// needPostgres returns the DSN of the tests' PostgreSQL, starting it on first
// use. Without one the test is skipped — or fails when CI=true.
func needPostgres(t testing.TB) string {
	t.Helper()
	pg.once.Do(func() {
		if dsn := os.Getenv("FENCECHECK_POSTGRES_DSN"); dsn != "" {
			pg.dsn = dsn
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		c, err := startCluster(ctx)
		if err != nil {
			pg.skip = fmt.Sprintf("no PostgreSQL for the tests (set FENCECHECK_POSTGRES_DSN, or install Debian's postgresql package): %v", err)
			return
		}
		pg.cluster, pg.dsn = c, c.dsn
	})
	if pg.dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(pg.skip)
		}
		t.Skip(pg.skip)
	}
	return pg.dsn
}

// stopPostgres stops the throwaway cluster, if one was started.
func stopPostgres() error {
	if pg.cluster == nil {
		return nil
	}
	return pg.cluster.stop()
}

type pgCluster struct {
	dir  string
	dsn  string
	cmd  *exec.Cmd
	done chan error
}

// findServer returns the bin directory of the newest Debian PostgreSQL
// server installed, or "".
func findServer() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			found = append(found, d)
		}
	}
	version := func(d string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return n
	}
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// installServer installs Debian's postgresql package.
func installServer(ctx context.Context) error {
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "postgresql"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, tail(out))
		}
	}
	return nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// clusterUser returns the credentials to run the server with: none (this
// process's) when not root; otherwise the postgres user, created as a
// system user named fencecheck-pg when Debian's is missing.
func clusterUser(ctx context.Context) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		if u, err = user.Lookup("fencecheck-pg"); err != nil {
			out, err := exec.CommandContext(ctx, "useradd", "--system", "--no-create-home",
				"--shell", "/usr/sbin/nologin", "fencecheck-pg").CombinedOutput()
			if err != nil {
				return nil, fmt.Errorf("creating user fencecheck-pg: %w: %s", err, out)
			}
			if u, err = user.Lookup("fencecheck-pg"); err != nil {
				return nil, err
			}
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// startCluster initialises a cluster in a new temporary directory and starts
// its server, socket only. It returns once the server accepts connections.
func startCluster(ctx context.Context) (*pgCluster, error) {
	bin := findServer()
	if bin == "" {
		if os.Geteuid() != 0 {
			return nil, errors.New("no server binaries in /usr/lib/postgresql/*/bin, and not root to install them")
		}
		if err := installServer(ctx); err != nil {
			return nil, err
		}
		if bin = findServer(); bin == "" {
			return nil, errors.New("postgresql installed, but no server binaries in /usr/lib/postgresql/*/bin")
		}
	}
	cred, err := clusterUser(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fencecheck-pg-")
	if err != nil {
		return nil, err
	}
	c := &pgCluster{dir: dir, done: make(chan error, 1)}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "fencecheck",
		"-A", "trust", "-E", "UTF8", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, tail(out))
	}
	const port = "5432" // only names the socket file, in our own directory
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-p", port,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200")
	c.cmd.Dir = dir
	// Killed with the test binary, whatever happens to it; its backends
	// follow the postmaster.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	ready := make(chan struct{})
	var logMu sync.Mutex
	var log strings.Builder
	go func() {
		signalled := false
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			if log.Len() < 64<<10 {
				log.WriteString(line + "\n")
			}
			logMu.Unlock()
			if !signalled && strings.Contains(line, "database system is ready to accept connections") {
				close(ready)
				signalled = true
			}
		}
		io.Copy(io.Discard, stderr)
		c.done <- c.cmd.Wait()
	}()
	select {
	case <-ready:
	case err := <-c.done:
		logMu.Lock()
		defer logMu.Unlock()
		return nil, fmt.Errorf("postgres exited before it was ready: %v\n%s", err, log.String())
	case <-ctx.Done():
		c.cmd.Process.Kill()
		<-c.done
		return nil, fmt.Errorf("postgres was not ready in time: %w", ctx.Err())
	}
	c.dsn = fmt.Sprintf("host=%s port=%s user=fencecheck dbname=postgres sslmode=disable", dir, port)
	ok = true
	return c, nil
}

// stop shuts the server down at once (SIGQUIT: immediate shutdown) and
// removes the cluster.
func (c *pgCluster) stop() error {
	err := c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

func TestMain(m *testing.M) {
	MaybeRunWorker()
	code := m.Run()
	if err := stopServices(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test services:", err)
		if code == 0 {
			code = 1
		}
	}
	if err := stopPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test postgres:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
