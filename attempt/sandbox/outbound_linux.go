package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate/attempt"
)

// startOutbound starts a prepare with outbound access (Outbound): its
// sandbox as a standby, whose command waits for its line; the proxy's
// socket, made inside the sandbox's network namespace; then the line.
// So the proxy listens before the prepare's first instruction.
func (s *Sandbox) startOutbound(dir string, c *attempt.Command) (*sandboxRun, error) {
	if !s.Level.Root {
		return nil, errNoOutbound
	}
	sb := *s
	sb.Network = false // its own namespace: --unshare-net
	env := outboundEnv(c.Env)
	line, err := execLine(c.Argv, env, sb.inside(dir))
	if err != nil {
		return nil, err
	}
	r, err := sb.spawn(dir, nil, env, true)
	if err != nil {
		return nil, err
	}
	var pid int
	select {
	case pid = <-r.pid:
	case <-time.After(time.Minute):
	}
	if pid <= 0 {
		r.kill()
		r.cleanup()
		return nil, errors.New("the prepare's sandbox did not start (bwrap named no process)")
	}
	l, err := listenIn(pid, OutboundProxy)
	if err != nil {
		r.kill()
		r.cleanup()
		return nil, fmt.Errorf("cannot put the proxy into the prepare's network namespace: %w", err)
	}
	r.proxy = serveOutbound(s.Outbound, l)
	_, err = r.specW.Write([]byte(line))
	r.specW.Close()
	r.specW = nil
	if err != nil {
		r.kill()
		r.cleanup()
		return nil, err
	}
	return r, nil
}

// listenIn listens on addr (TCP) in the network namespace of process
// pid: a thread of flakegate, locked to one goroutine, joins that
// namespace, makes the socket (which stays in the namespace it was made
// in) and goes back, so no other goroutine ever runs in that namespace.
func listenIn(pid int, addr string) (net.Listener, error) {
	ns, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The thread goes back to flakegate's namespace before it is
		// unlocked. It must not end instead: a helper started from it
		// would get its parent-death signal.
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer own.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("setns: %w", err)}
			return
		}
		// 0.0.0.0: the namespace's loopback may not be up yet (bwrap
		// brings it up); its only interface is the loopback.
		_, port, _ := net.SplitHostPort(addr)
		l, err := net.Listen("tcp4", "0.0.0.0:"+port)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		} // else the thread stays locked in the prepare's namespace and ends with this goroutine
		ch <- result{l, err}
	}()
	res := <-ch
	return res.l, res.err
}
