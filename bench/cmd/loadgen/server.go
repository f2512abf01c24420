package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// server is a server process the generator started itself, so that each
// measurement that needs a fresh process gets one.
type server struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed once the process has exited
	err  error         // its exit status, valid after done
}

// startServer runs argv with its output appended to logPath ("" discards
// it) and returns once addr accepts connections. The process is killed if
// the generator dies first, so a failed run leaves nothing listening.
func startServer(argv []string, logPath, addr string) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s := &server{cmd: cmd, done: make(chan struct{})}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		s.log, cmd.Stdout, cmd.Stderr = f, f, f
	}
	if err := cmd.Start(); err != nil {
		s.closeLog()
		return nil, err
	}
	go func() {
		s.err = cmd.Wait()
		s.closeLog()
		close(s.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited before listening on %s (%v; log: %s)", argv[0], addr, s.err, logPath)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s did not listen on %s within 30 s (log: %s)", argv[0], addr, logPath)
		}
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// exited reports whether the process has ended (it should not have while
// it is measured).
func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// stop asks the process to end (SIGTERM) and kills it if it has not within
// 15 s; it returns once the process is gone.
func (s *server) stop() error {
	if s.exited() {
		return errors.New("the server had already exited")
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(15 * time.Second):
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	return errors.New("the server did not stop within 15 s of SIGTERM; killed")
}

func (s *server) closeLog() {
	if s.log != nil {
		s.log.Close()
	}
}
