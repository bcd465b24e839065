package dev.execache.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.store.sqlite.Unwritten.PendingUse;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UnwrittenTest {

    @Test
    void whatAFailedWriteTookIsMergedWithWhatWasNotedSince() {
        Unwritten failed = new Unwritten();
        failed.noteFirst(100);
        failed.uses.put("v1:a", new PendingUse(10, 2));
        failed.uses.put("v1:b", new PendingUse(10, 1));
        failed.counts.put("HITS", 3L);
        failed.expired.put("v1:c", 10L);
        Unwritten since = new Unwritten();
        since.noteFirst(200);
        since.uses.put("v1:a", new PendingUse(10, 5));
        since.uses.put("v1:b", new PendingUse(20, 1));
        since.counts.put("HITS", 4L);
        since.counts.put("MISSES", 1L);
        since.expired.put("v1:c", 30L);

        Unwritten merged = failed.followedBy(since);

        assertThat(merged.firstAt).isEqualTo(100);
        assertThat(merged.uses).containsExactly(
                Map.entry("v1:a", new PendingUse(10, 7)),
                Map.entry("v1:b", new PendingUse(20, 1)));
        assertThat(merged.counts).containsEntry("HITS", 7L).containsEntry("MISSES", 1L);
        assertThat(merged.expired).containsExactly(Map.entry("v1:c", 10L));
    }

    @Test
    void nothingNotedOnOneSideKeepsTheOthersFirstTime() {
        Unwritten later = new Unwritten();
        later.noteFirst(200);
        later.counts.put("HITS", 1L);

        assertThat(new Unwritten().followedBy(later).firstAt).isEqualTo(200);
        assertThat(later.followedBy(new Unwritten()).firstAt).isEqualTo(200);
    }

    @Test
    void hitsCountOnlyForTheEntryTheUseWasOf() {
        Unwritten noted = new Unwritten();
        noted.uses.put("v1:a", new PendingUse(10, 3));

        assertThat(noted.hits("v1:a", 10)).isEqualTo(3);
        assertThat(noted.hits("v1:a", 11)).isZero();
        assertThat(noted.hits("v1:b", 10)).isZero();
    }
}
