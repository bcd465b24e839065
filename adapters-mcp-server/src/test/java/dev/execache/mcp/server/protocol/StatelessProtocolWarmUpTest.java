package dev.execache.mcp.server.protocol;

import static org.assertj.core.api.Assertions.assertThatCode;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.gateway.TestTools;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import org.junit.jupiter.api.Test;

class StatelessProtocolWarmUpTest {

    /**
     * The warm-up's failures are only logged (it moves a cost, nothing depends on it): this is where a change of the
     * SDK's types that it no longer reads or writes shows.
     */
    @Test
    void theWarmUpWritesTheToolsAndReadsAndAnswersAnInitializeRequest() {
        StatelessProtocol protocol = new StatelessProtocol(new TestTools().tools, "test",
                new JacksonMcpJsonMapper(new ObjectMapper()), (method, params) -> { });

        assertThatCode(protocol::warmUp).doesNotThrowAnyException();
    }
}
