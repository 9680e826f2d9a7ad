// A31: ApiPay's Temporal server: the Temporal server 1.29.1 (go.temporal.io/server, the same version the stack
// built before) with ApiPay's claim mapper (claims.go), authorizer (authorizer.go) and identity stamp (identity.go)
// when TEMPORAL_AUTH_ISSUER is set. Same command line as the stock server's `start` (--root, --config, --env,
// --zone, --allow-no-auth; after `start`, --service/-s repeated to run only those services, as scripts/cluster.sh
// does for one process per service, R22); without an issuer it runs with no authorization only under --allow-no-auth.
// The server's own worker service reaches the internal frontend (config: services.internal-frontend), which maps
// every caller to system admin: it must only be reachable by the server (loopback here, mTLS in production).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the stack's persistence
	"go.temporal.io/server/temporal"
	"google.golang.org/grpc"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "apipay temporal-server:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("temporal-server", flag.ContinueOnError)
	root := fs.String("root", ".", "root directory")
	configDir := fs.String("config", "config", "config directory under root")
	env := fs.String("env", "development", "config environment")
	zone := fs.String("zone", "", "config zone")
	allowNoAuth := fs.Bool("allow-no-auth", false, "run without authorization when TEMPORAL_AUTH_ISSUER is unset")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) < 1 || rest[0] != "start" {
		return fmt.Errorf("usage: temporal-server [flags] start [--service NAME]...")
	}
	chosen, err := parseStart(rest[1:])
	if err != nil {
		return err
	}
	settings, authOn, err := LoadSettingsFromEnv()
	if err != nil {
		return err
	}
	if !authOn && !*allowNoAuth {
		return fmt.Errorf("TEMPORAL_AUTH_ISSUER is unset: set it, or pass --allow-no-auth to run unprotected")
	}
	cfg, err := config.LoadConfig(*env, filepath.Join(*root, *configDir), *zone)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	dc := dynamicconfig.Client(dynamicconfig.NewNoopClient())
	if cfg.DynamicConfigClient != nil {
		if dc, err = dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh()); err != nil {
			return fmt.Errorf("dynamic config: %w", err)
		}
	}
	services := slices.Clone(temporal.DefaultServices)
	if _, ok := cfg.Services["internal-frontend"]; ok {
		services = append(services, "internal-frontend")
	}
	if len(chosen) > 0 {
		services = chosen
	}
	opts := []temporal.ServerOption{
		temporal.ForServices(services),
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dc),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
	}
	if authOn {
		if _, ok := cfg.Services["internal-frontend"]; !ok {
			return fmt.Errorf("authorization needs services.internal-frontend in the config (the server's own worker uses it)")
		}
		mapper := NewClaimMapper(settings)
		opts = append(opts,
			temporal.WithAuthorizer(NewAuthorizer(settings.Namespaces)),
			temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return mapper }),
			temporal.WithChainedFrontendGrpcInterceptors(grpc.UnaryServerInterceptor(IdentityInterceptor(settings.IdentityPrefix))),
		)
		logger.Warn("ApiPay authorization on: issuer " + settings.Issuer + ", audience " + settings.Audience +
			", service clients " + strings.Join(settings.ServiceClients, ",") + ", namespaces " + strings.Join(settings.Namespaces, ","))
	}
	s, err := temporal.NewServer(opts...)
	if err != nil {
		return fmt.Errorf("create server: %w", err)
	}
	return s.Start()
}

// serviceList collects a repeated --service flag.
type serviceList []string

func (l *serviceList) String() string     { return strings.Join(*l, ",") }
func (l *serviceList) Set(v string) error { *l = append(*l, v); return nil }

// parseStart reads the flags after `start`: --service/-s NAME, repeated (the stock server's flag), each one of the
// server's services. None: every default service (and the internal frontend when the config has it).
func parseStart(args []string) ([]string, error) {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	var chosen serviceList
	fs.Var(&chosen, "service", "a service to run (repeat for several)")
	fs.Var(&chosen, "s", "short for --service")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if len(fs.Args()) > 0 {
		return nil, fmt.Errorf("usage: temporal-server [flags] start [--service NAME]...: unexpected %q", fs.Args()[0])
	}
	known := append(slices.Clone(temporal.DefaultServices), "internal-frontend")
	for _, s := range chosen {
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("unknown service %q (one of %s)", s, strings.Join(known, ", "))
		}
	}
	return chosen, nil
}
