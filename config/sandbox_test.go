package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

const sandboxProps = `properties:
  - path: p.py
    fixture: f
    seeds: [1]
    run: [pytest, "{path}"]
    wall_budget: 10s
`

func TestSandboxBlock(t *testing.T) {
	type testCase struct {
		name  string
		block string
		want  config.Sandbox
		err   string // substring of the error; "" means it loads
	}
	run := func(t *testing.T, tc testCase) {
		cfg, err := config.Load([]byte("version: 1\n"+tc.block+sandboxProps), "flakegate.yaml")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || flakegate.ErrorCode(err) != flakegate.EINVALID {
				t.Fatalf("err = %v, want EINVALID with %q", err, tc.err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if tc.want.Limits.Set == nil {
			tc.want.Limits = config.DefaultLimits()
		}
		if !reflect.DeepEqual(cfg.Sandbox, tc.want) {
			t.Errorf("sandbox = %+v, want %+v", cfg.Sandbox, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "absent is auto", want: config.Sandbox{Mode: "auto"}},
		{name: "limits", block: "sandbox:\n  limits: {memory: 256MiB, pids: 64, tmp: \"64MiB\", disk: 1073741824}\n",
			want: config.Sandbox{Mode: "auto", Limits: config.Limits{Memory: 256 << 20, Pids: 64, Tmp: 64 << 20, Disk: 1 << 30,
				Set: map[string]bool{"memory": true, "pids": true, "tmp": true, "disk": true}}}},
		{name: "limits keep defaults", block: "sandbox:\n  limits: {pids: 100}\n",
			want: config.Sandbox{Mode: "auto", Limits: config.Limits{Memory: config.DefaultMemory, Pids: 100, Tmp: config.DefaultTmp, Disk: config.DefaultDisk,
				Set: map[string]bool{"pids": true}}}},
		{name: "limit without unit word", block: "sandbox:\n  limits: {memory: 4GB}\n", err: "not a size"},
		{name: "limit too small", block: "sandbox:\n  limits: {tmp: 4KiB}\n", err: "smallest limit"},
		{name: "limit unknown key", block: "sandbox:\n  limits: {cpu: 2}\n", err: "cpu"},
		{name: "pids too few", block: "sandbox:\n  limits: {pids: 2}\n", err: "pids"},
		{name: "full", block: "sandbox:\n  mode: bwrap\n  ro: [/root/go/pkg/mod, /opt/data/]\n  rw: [/var/cache/props]\n  network: true\n  env: [GOFLAGS, HYPOTHESIS_PROFILE]\n",
			want: config.Sandbox{Mode: "bwrap", RO: []string{"/root/go/pkg/mod", "/opt/data"}, RW: []string{"/var/cache/props"}, Network: true, Env: []string{"GOFLAGS", "HYPOTHESIS_PROFILE"}}},
		{name: "none", block: "sandbox: {mode: none}\n", want: config.Sandbox{Mode: "none"}},
		{name: "unknown mode", block: "sandbox: {mode: docker}\n", err: "sandbox.mode"},
		{name: "unknown key", block: "sandbox: {tmp: true}\n", err: "sandbox.tmp: unknown key"},
		{name: "relative path", block: "sandbox: {ro: [cache]}\n", err: "sandbox.ro[0]: path \"cache\" is not absolute"},
		{name: "dot-dot", block: "sandbox: {rw: [/var/../etc/x]}\n", err: "'..'"},
		{name: "root", block: "sandbox: {rw: [/]}\n", err: "whole system folder"},
		{name: "twice", block: "sandbox: {ro: [/opt/a], rw: [/opt/a/]}\n", err: "listed twice"},
		{name: "network not a bool", block: "sandbox: {network: yes please}\n", err: "want true or false"},
		{name: "bad env name", block: "sandbox: {env: [\"A-B\"]}\n", err: "not a variable name"},
		{name: "flakegate's own", block: "sandbox: {env: [FLAKEGATE_LEDGER]}\n", err: "flakegate's own settings"},
		{name: "postgres", block: "sandbox: {env: [PGPASSWORD]}\n", err: "PostgreSQL"},
		{name: "token", block: "sandbox: {env: [GITHUB_TOKEN]}\n", err: "credential"},
		{name: "env twice", block: "sandbox: {env: [A, A]}\n", err: "listed twice"},
		{name: "null", block: "sandbox:\n", err: "has no value"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
