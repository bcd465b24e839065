package dev.execache.cli.command;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.output.Entries;
import dev.execache.cli.output.Output;
import dev.execache.cli.settings.Durations;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.GatewayConfig;
import dev.execache.cli.settings.Redaction;
import dev.execache.cli.settings.Settings;
import dev.execache.gateway.Json;
import dev.execache.tools.mcp.DownstreamSettings;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.UrlServerSettings;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "config", mixinStandardHelpOptions = true,
        description = {"Prints the settings a command would use here, and where each came from: a flag, an "
                + "environment variable, the config file or the default.",
            "The config file is --config, else EXECACHE_CONFIG, else the nearest execache.yaml in this directory or "
                    + "a parent, else $XDG_CONFIG_HOME/execache/execache.yaml (~/.config/execache/execache.yaml).",
            "Takes the flags of `run`, to show what they change."})
final class ConfigCommand implements Callable<Integer> {
    private final Environment environment;

    @Spec
    CommandSpec spec;

    @Mixin
    RunOptions options = new RunOptions();

    @Option(names = "--json", description = "Print one JSON object: each setting's value and source. Default: false.")
    boolean json;

    @Inject
    ConfigCommand(Environment environment) {
        this.environment = environment;
    }

    /**
     * Each server: its command, or its URL (without query) with the variables its headers name,
     * each set or unset. Never a header's value: it may be a credential.
     */
    private String servers(Settings settings) {
        if (settings.gateway().isEmpty()) {
            return "(none)";
        }
        List<String> servers = new ArrayList<>();
        for (GatewayConfig.Server server : settings.gateway().servers()) {
            DownstreamSettings reached = server.settings().startedFor(environment.variables(), environment.workingDir());
            if (reached instanceof UrlServerSettings url) {
                List<String> variables = new ArrayList<>();
                url.variables().forEach((name, set) -> variables.add(name + " " + (set ? "set" : "unset")));
                servers.add(url.name() + " " + UrlServerSettings.withoutQuery(url.url())
                        + (url.headers().isEmpty() ? "" : " headers " + String.join(", ", new TreeSet<>(url.headers().keySet())))
                        + (url.clientCredentials() == null ? "" : " oauth " + url.clientCredentials().clientId())
                        + (url.perPerson() ? " as each agent's person (token exchange)" : "")
                        + (variables.isEmpty() ? "" : " (" + String.join(", ", variables) + ")"));
            } else if (reached instanceof McpServerSettings command) {
                servers.add(command.name() + " " + command.command());
            }
        }
        return String.join("; ", servers);
    }

    @Override
    public Integer call() {
        Settings settings = Settings.resolve(options.flags(), environment);
        Map<String, String> values = new LinkedHashMap<>();
        values.put("config", settings.configPath() == null ? "(none)" : settings.configPath().toString());
        values.put("store", settings.store().toString());
        values.put("sqlite_path", settings.sqlitePath().toString());
        values.put("redis_url", Redaction.redactUrl(settings.redisUrl()));
        values.put("redis_partitions", Integer.toString(settings.redisPartitions()));
        values.put("signing_key", !settings.signingKeys().isEmpty() ? settings.signingKeys().size() + " key(s), the first signs"
                : settings.sources().getOrDefault("signing_key", "none").startsWith("none") ? "(none)"
                : "(only the redis store signs entries)");
        values.put("require_store", Boolean.toString(settings.requireStore()));
        values.put("enabled", Boolean.toString(settings.policy().enabled()));
        values.put("ttl", Durations.format(settings.policy().ttl()));
        values.put("max_entries", Integer.toString(settings.policy().maxEntries()));
        values.put("timeout", Durations.format(settings.limits().timeout()));
        values.put("memory_mb", Integer.toString(settings.limits().memoryMb()));
        values.put("allow_read", settings.limits().allowRead().isEmpty() ? "(none)"
                : String.join(", ", settings.limits().allowRead()));
        values.put("tools", Entries.tools(settings.tools()));
        values.put("deno", settings.denoPath() == null ? "(look up)" : settings.denoPath().toString());
        values.put("servers", servers(settings));
        values.put("expose", settings.expose().label());
        Map<String, String> sources = new LinkedHashMap<>(settings.sources());
        if (!settings.gateway().isEmpty()) {
            sources.put("servers", "config " + settings.configPath());
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ObjectNode node = Json.MAPPER.createObjectNode();
            values.forEach((name, value) -> {
                ObjectNode setting = node.putObject(name);
                setting.put("value", value);
                setting.put("source", sources.getOrDefault(name, "default"));
            });
            out.println(Json.write(node));
        } else {
            values.forEach((name, value) -> out.printf(Locale.ROOT, "%-14s %s  [%s]%n", name, value,
                    sources.getOrDefault(name, "default")));
        }
        out.flush();
        return ExitCode.OK;
    }
}
