package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.execache.cli.archfixture.CliUsingTheRequestPath;
import dev.execache.cli.client.archfixture.ClientUsingJackson;
import dev.execache.core.PublicHelperOfCore;
import dev.execache.core.archfixture.CoreUsingPicocli;
import dev.execache.core.spi.PublicHelperOfTheSpi;
import dev.execache.gateway.archfixture.GatewayUsingATransport;
import dev.execache.mcp.server.archfixture.McpServerUsingAnAdapter;
import dev.execache.mcp.server.protocol.StatelessProtocol;
import dev.execache.store.memory.archfixture.AdapterUsingTheCli;
import dev.execache.tools.mcp.archfixture.ServerClientUsingTheGateway;
import org.junit.jupiter.api.Test;

/** Each architecture rule turns red on classes that break it: none passes vacuously. */
class ArchitectureRulesCanFailTest {
    private final JavaClasses violators = new ClassFileImporter()
            .importClasses(CoreUsingPicocli.class, AdapterUsingTheCli.class, Main.class, ClientUsingJackson.class,
                    PublicHelperOfCore.class, PublicHelperOfTheSpi.class, McpServerUsingAnAdapter.class,
                    GatewayUsingATransport.class, CliUsingTheRequestPath.class, StatelessProtocol.class,
                    ServerClientUsingTheGateway.class);

    @Test
    void coreRuleFailsWhenCoreUsesALibrary() {
        assertThat(ArchitectureTest.coreDependsOnlyOnTheJdk.evaluate(violators).hasViolation()).isTrue();
    }

    @Test
    void adapterRuleFailsWhenAnAdapterUsesTheCli() {
        assertThat(ArchitectureTest.adaptersDependOnNoOtherAdapterNorTheCli.evaluate(violators).hasViolation()).isTrue();
    }

    @Test
    void wiringRuleFailsWhenPicocliIsUsedOutsideTheCli() {
        assertThat(ArchitectureTest.onlyTheCliKnowsGuiceAndPicocli.evaluate(violators).hasViolation()).isTrue();
    }

    @Test
    void apiRuleFailsOnANewPublicTypeInCore() {
        assertThat(ArchitectureTest.coreExportsOnlyItsLibraryApi.evaluate(violators).hasViolation()).isTrue();
    }

    @Test
    void spiRuleFailsOnANewPublicTypeInTheSpi() {
        assertThat(ArchitectureTest.coreSpiExportsOnlyWhatAdaptersNeed.evaluate(violators).hasViolation()).isTrue();
    }

    @Test
    void apiAndSpiRulesHoldForEveryTypeTheyName() {
        JavaClasses core = new ClassFileImporter()
                .withImportOption(new ImportOption.DoNotIncludeTests())
                .withImportOption(new ArchitectureTest.DoNotIncludeTestJars())
                .importPackages("dev.execache.core");
        assertThat(ArchitectureTest.coreExportsOnlyItsLibraryApi.evaluate(core).hasViolation()).isFalse();
        assertThat(ArchitectureTest.coreSpiExportsOnlyWhatAdaptersNeed.evaluate(core).hasViolation()).isFalse();
        assertThat(ArchitectureTest.CORE_API).allSatisfy(name ->
                assertThat(core.contain("dev.execache.core." + name)).as(name + " exists").isTrue());
        assertThat(ArchitectureTest.CORE_SPI).allSatisfy(name ->
                assertThat(core.contain("dev.execache.core.spi." + name)).as(name + " exists").isTrue());
    }

    @Test
    void mcpServerRuleFailsWhenTheServerReachesAnAdapter() {
        assertThat(ArchitectureTest.theMcpServerKnowsOnlyCoreTheGatewayAndTheMcpSdk.evaluate(violators).hasViolation())
                .isTrue();
    }

    @Test
    void mcpServerApiRuleFailsWhenTheCliReachesIntoTheRequestPath() {
        assertThat(ArchitectureTest.theMcpServerIsReachedOnlyThroughWhatTheCliStarts.evaluate(violators).hasViolation())
                .isTrue();
    }

    @Test
    void gatewayRulesFailWhenTheGatewayReachesATransport() {
        assertThat(ArchitectureTest.theGatewayHoldsNoTransportType.evaluate(violators).hasViolation()).isTrue();
        assertThat(ArchitectureTest.theGatewayKnowsOnlyCoreAndTheMcpSchema.evaluate(violators).hasViolation()).isTrue();
        assertThat(ArchitectureTest.theGatewayExportsOnlyItsApi.evaluate(violators).hasViolation()).isTrue();
    }

    @Test
    void gatewayRuleFailsWhenADrivenAdapterReachesUpToIt() {
        assertThat(ArchitectureTest.noAdapterButTheMcpServerKnowsTheGateway.evaluate(violators).hasViolation()).isTrue();
    }

    @Test
    void mcpServerAndGatewayApiRulesHoldForEveryTypeTheyName() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(new ImportOption.DoNotIncludeTests())
                // the modules' test-jars (RawHttp, TestTools: public test helpers) are on the class path too
                .withImportOption(new ArchitectureTest.DoNotIncludeTestJars())
                .importPackages("dev.execache.mcp.server", "dev.execache.gateway", "dev.execache.cli");
        assertThat(ArchitectureTest.theMcpServerIsReachedOnlyThroughWhatTheCliStarts.evaluate(classes).hasViolation())
                .isFalse();
        assertThat(ArchitectureTest.theGatewayExportsOnlyItsApi.evaluate(classes).hasViolation()).isFalse();
        assertThat(ArchitectureTest.MCP_SERVER_API).allSatisfy(name ->
                assertThat(classes.contain("dev.execache.mcp.server." + name)).as(name + " exists").isTrue());
        assertThat(ArchitectureTest.GATEWAY_API).allSatisfy(name ->
                assertThat(classes.contain("dev.execache.gateway." + name)).as(name + " exists").isTrue());
    }

    @Test
    void cycleRuleFailsOnACycle() {
        assertThat(ArchitectureTest.noPackageCycles.evaluate(violators).hasViolation()).isTrue();
    }

    @Test
    void thinClientRuleFailsWhenTheClientUsesALibrary() {
        assertThat(ArchitectureTest.theThinClientUsesOnlyTheJdk.evaluate(violators).hasViolation()).isTrue();
    }
}
