package dev.execache.cli;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import java.util.List;
import java.util.stream.Stream;

/**
 * The dependency rules of docs/architecture.md, checked on every module's main classes (app-cli sees
 * them all). {@link ArchitectureRulesCanFailTest} shows each rule turning red.
 */
@AnalyzeClasses(packages = "dev.execache",
        importOptions = {ImportOption.DoNotIncludeTests.class, ArchitectureTest.DoNotIncludeTestJars.class})
class ArchitectureTest {
    static final String CORE = "dev.execache.core..";
    static final String CLI = "dev.execache.cli..";
    static final String THIN_CLIENT = "dev.execache.cli.client..";
    static final List<String> ADAPTERS = List.of(
            "dev.execache.store.memory..", "dev.execache.store.sqlite..", "dev.execache.store.redis..", "dev.execache.sandbox..",
            "dev.execache.tools.mcp..", "dev.execache.mcp.server..");
    static final String MCP_SERVER = "dev.execache.mcp.server..";
    static final String GATEWAY = "dev.execache.gateway..";

    @ArchTest
    static final ArchRule coreDependsOnlyOnTheJdk = noClasses()
            .that().resideInAPackage(CORE)
            .should().dependOnClassesThat().resideOutsideOfPackages("java..", CORE)
            .because("core ships with no dependency but the JDK");

    @ArchTest
    static final ArchRule adaptersDependOnNoOtherAdapterNorTheCli = adapterIsolation();

    @ArchTest
    static final ArchRule onlyTheCliKnowsGuiceAndPicocli = noClasses()
            .that().resideOutsideOfPackage(CLI)
            .should().dependOnClassesThat().resideInAnyPackage("com.google.inject..", "jakarta.inject..", "picocli..")
            .because("adapters are plain classes; the wiring lives in app-cli");

    @ArchTest
    static final ArchRule theThinClientUsesOnlyTheJdk = classes()
            .that().resideInAPackage(THIN_CLIENT)
            .should().onlyDependOnClassesThat().resideInAnyPackage("java..", THIN_CLIENT)
            .because("the command a person types must start in tens of milliseconds: no Guice, picocli, Jackson or Jdbi"
                    + " on its path (the in-process mode is reached by name)");

    @ArchTest
    static final ArchRule theMcpServerKnowsOnlyCoreTheGatewayAndTheMcpSdk = classes()
            .that().resideInAPackage(MCP_SERVER)
            .should().onlyDependOnClassesThat().resideInAnyPackage("java..", CORE, GATEWAY, MCP_SERVER,
                    "io.modelcontextprotocol..", "com.fasterxml.jackson..", "reactor..", "org.eclipse.jetty..",
                    "com.nimbusds..")
            .because("the MCP server is a driving adapter: it carries requests to the gateway, and app-cli starts it"
                    + " (docs/architecture.md)");

    @ArchTest
    static final ArchRule theGatewayKnowsOnlyCoreAndTheMcpSchema = classes()
            .that().resideInAPackage(GATEWAY)
            .should().onlyDependOnClassesThat().resideInAnyPackage("java..", CORE, GATEWAY,
                    "io.modelcontextprotocol.spec..", "com.fasterxml.jackson..")
            .because("the gateway is a use case: it reaches the cache through core and the servers through core's"
                    + " ports, and speaks MCP's schema, not a transport");

    @ArchTest
    static final ArchRule theGatewayHoldsNoTransportType = noClasses()
            .that().resideInAPackage(GATEWAY)
            .should().dependOnClassesThat().resideInAnyPackage(MCP_SERVER, "io.modelcontextprotocol.server.transport..",
                    "io.modelcontextprotocol.client..", "org.eclipse.jetty..", "jakarta.servlet..")
            .orShould().dependOnClassesThat().haveSimpleNameEndingWith("Transport")
            .orShould().dependOnClassesThat().haveSimpleNameEndingWith("TransportProvider")
            .because("stdio and HTTP carry requests to the gateway; the gateway never knows which one did");

    @ArchTest
    static final ArchRule noAdapterButTheMcpServerKnowsTheGateway = noClasses()
            .that().resideInAnyPackage(ADAPTERS.stream().filter(adapter -> !adapter.equals(MCP_SERVER))
                    .toArray(String[]::new))
            .should().dependOnClassesThat().resideInAPackage(GATEWAY)
            .orShould().dependOnClassesThat().resideInAPackage(CLI)
            .because("the gateway is driven by the MCP server and assembled by app-cli; driven adapters sit below it");

    @ArchTest
    static final ArchRule theGatewayKnowsNoAdapterNorTheCli = noClasses()
            .that().resideInAPackage(GATEWAY)
            .should().dependOnClassesThat().resideInAnyPackage(Stream.concat(ADAPTERS.stream(), Stream.of(CLI))
                    .toArray(String[]::new))
            .because("the gateway reaches stores, the sandbox and the servers through core's ports only");

    /**
     * What a library user of core needs, and nothing more: the two faces of the policy, what they
     * are built with, requests, results, outcomes and figures. A new public type here is a
     * decision: add it to this list and to docs/java-library.md, or keep it package-private.
     */
    static final List<String> CORE_API = List.of(
            "CachedExecutor", "CachedTool", "MutableToolVersions", "Ticker", "CachePolicy", "Limits", "ToolCacheRule",
            // a rule's cheap call that revalidates an expired tool answer
            "ToolValidator",
            "ToolInvoker", "ToolCallKeyGenerator", "CacheListener", "Glob", "UnknownToolException",
            // the store as both faces use it, built once per store and given to both
            "StoreGuard",
            "ExecutionRequest", "ExecutionResult", "ExecutionError", "ErrorType", "ExecutionOutcome", "CacheStatus",
            "ToolResult", "ToolCallRequest", "ToolCallOutcome", "ToolCallRecord", "ToolCallInfo", "Invalidation", "CacheStats", "ToolStats",
            "Agents", "KeptOut",
            // freshness a caller asks for, a server's hint, why entries left
            "Freshness", "CacheHint", "RemovalCause",
            // the canonical JSON every module keys and fingerprints with (RFC 8785)
            "CanonicalJson");

    /**
     * What an adapter author needs: the ports (store, sandbox, tool versions, tool catalog, the tools
     * code may call) and what crosses them.
     */
    static final List<String> CORE_SPI = List.of(
            "CacheStore", "CacheEntry", "StoreCounters", "WriteGenerations", "SessionRegistry", "Counter", "GroupBound", "FlightLease",
            "Sandbox", "SandboxUnavailableException",
            "ToolVersionSource", "ToolCatalog", "CatalogTool", "ResultTtl", "ToolCallCancelledException", "ServerRefusedException", "AgentRefusedException", "CodeTools", "CodeToolCall",
            // where spans and counts go (tracing and metrics), with trace context as W3C fields
            "Telemetry",
            // how an adapter's child process is made to die with execache (the sandbox's and the servers')
            "ParentDeathSignal");

    @ArchTest
    static final ArchRule coreExportsOnlyItsLibraryApi = classes()
            .that().resideInAPackage("dev.execache.core").and().arePublic().and().areTopLevelClasses()
            .should().haveNameMatching("dev\\.execache\\.core\\.(" + String.join("|", CORE_API) + ")")
            .because("core's public types are its library API (docs/java-library.md); helpers stay package-private");

    @ArchTest
    static final ArchRule coreSpiExportsOnlyWhatAdaptersNeed = classes()
            .that().resideInAPackage("dev.execache.core.spi").and().arePublic().and().areTopLevelClasses()
            .should().haveNameMatching("dev\\.execache\\.core\\.spi\\.(" + String.join("|", CORE_SPI) + ")")
            .because("the SPI is what an adapter implements or receives, nothing more");

    /**
     * What app-cli needs of the MCP server: the two servers and their settings. A new type here is a
     * decision: add it to this list, or keep it to the module (the request path, the transports' parts).
     */
    static final List<String> MCP_SERVER_API = List.of(
            "stdio.McpStdioServer", "http.McpHttpServer", "http.HttpServeSettings", "http.OAuthSettings");

    @ArchTest
    static final ArchRule theMcpServerIsReachedOnlyThroughWhatTheCliStarts = classes()
            .that().resideInAPackage(MCP_SERVER).and().areTopLevelClasses()
            .and().haveNameNotMatching(mcpServerApi())
            .should().onlyHaveDependentClassesThat().resideInAPackage(MCP_SERVER)
            .because("app-cli starts the MCP server with its two servers and their settings; the request path both"
                    + " transports share and the transports' parts stay inside the module");

    /**
     * What the MCP server and app-cli need of the gateway: what serve offers (a tool and who calls it) and its
     * settings, the rules, the calls in flight, the servers' features the request path answers, and the JSON shape
     * of outcomes and figures. A new public type here is a decision: add it to this list, or keep it package-private.
     */
    static final List<String> GATEWAY_API = List.of(
            "Gateway", "GatewayPolicy", "ServeTools", "ServeSettings", "OfferedTool", "RequestOrigin", "ToolCallRules",
            "TypeScriptDeclarations", "InFlightCalls", "ServerFeatures", "ServerTasks", "Json", "Expose",
            "ListChangeNotices");

    @ArchTest
    static final ArchRule theGatewayExportsOnlyItsApi = classes()
            .that().resideInAPackage(GATEWAY).and().arePublic().and().areTopLevelClasses()
            .should().haveNameMatching("dev\\.execache\\.gateway\\.(" + String.join("|", GATEWAY_API) + ")")
            .because("the transports reach the gateway only through its public types; its parts stay package-private");

    static String mcpServerApi() {
        return "dev\\.execache\\.mcp\\.server\\.(" + String.join("|", MCP_SERVER_API).replace(".", "\\.") + ")";
    }

    /**
     * The SPI names the requests and results that cross its ports, which the API owns (as Caffeine's
     * {@code cache.stats.StatsCounter} names {@code cache.RemovalCause}): that one pair is one part.
     */
    @ArchTest
    static final ArchRule noPackageCycles = slices().matching("dev.execache.(**)").should().beFreeOfCycles()
            .ignoreDependency(resideInAPackage("dev.execache.core.spi"), resideInAPackage("dev.execache.core"));

    static ArchRule adapterIsolation() {
        ArchRule rule = null;
        for (String adapter : ADAPTERS) {
            String[] others = Stream.concat(
                    ADAPTERS.stream().filter(other -> !other.equals(adapter)), Stream.of(CLI))
                    .toArray(String[]::new);
            ArchRule one = noClasses().that().resideInAPackage(adapter)
                    .should().dependOnClassesThat().resideInAnyPackage(others)
                    .allowEmptyShould(true);
            rule = rule == null ? one : CompositeArchRule.of(rule).and(one);
        }
        return rule;
    }

    /** Test code of other modules arrives as their test-jar (core's contracts), not as test-classes. */
    static final class DoNotIncludeTestJars implements ImportOption {
        @Override
        public boolean includes(Location location) {
            return !location.contains("-tests.jar");
        }
    }

    /** A typo in a package name must not make a rule pass for want of classes. */
    @ArchTest
    static void everyPackageNamedInTheRulesHasClasses(JavaClasses classes) {
        Stream.concat(Stream.of(CORE, CLI, THIN_CLIENT, MCP_SERVER, GATEWAY), ADAPTERS.stream()).forEach(pkg ->
                classes().that().resideInAPackage(pkg).should().bePublic().orShould().notBePublic()
                        .allowEmptyShould(false).check(classes));
    }
}
