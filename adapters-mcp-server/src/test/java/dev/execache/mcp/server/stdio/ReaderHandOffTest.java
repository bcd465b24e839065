package dev.execache.mcp.server.stdio;

import dev.execache.mcp.server.stdio.ReaderHandOff;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ReaderHandOffTest {
    private static final long AFTER = TimeUnit.MILLISECONDS.toNanos(2);
    private final ReaderHandOff handOff = new ReaderHandOff(AFTER);

    @Test
    void aQuickCallKeepsTheReaderReading() {
        ReaderHandOff.Call call = handOff.begin(0);
        assertThat(handOff.handOnIfDue(AFTER - 1)).isFalse();
        assertThat(handOff.end(call)).isTrue();
        assertThat(handOff.busy()).isFalse();
        assertThat(handOff.handOnIfDue(10 * AFTER)).isFalse();
    }

    @Test
    void aLongCallHandsReadingOnOnceAndItsReaderThenStops() {
        ReaderHandOff.Call call = handOff.begin(0);
        assertThat(handOff.handOnIfDue(AFTER)).isTrue();
        assertThat(handOff.handOnIfDue(2 * AFTER)).isFalse();
        assertThat(handOff.end(call)).isFalse();
    }

    @Test
    void theNextReadersCallIsStillHandedOnWhenTheLastReaderEndsItsCallAfterItBegan() {
        // reader A answers a long call; reading is handed on to reader B
        ReaderHandOff.Call first = handOff.begin(0);
        assertThat(handOff.handOnIfDue(AFTER)).isTrue();
        // A has written its answer; the agent sends the next call at once, and B begins answering it
        ReaderHandOff.Call second = handOff.begin(AFTER + 1);
        // only now does A end its call: it must not make B's call look finished
        assertThat(handOff.end(first)).isFalse();
        assertThat(handOff.busy()).isTrue();
        // B's call (whose server asks the agent something) hands reading on, so that the agent's answer is read
        assertThat(handOff.handOnIfDue(2 * AFTER + 1)).isTrue();
        assertThat(handOff.end(second)).isFalse();
        assertThat(handOff.busy()).isFalse();
    }
}
