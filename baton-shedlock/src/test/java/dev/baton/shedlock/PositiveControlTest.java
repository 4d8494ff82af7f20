package dev.baton.shedlock;

import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/** ShedLock's suite catches what a naive Baton provider gets wrong, so its passing on ours means something. */
class PositiveControlTest {

    @Test
    void shedLocksSuiteFailsTheNaiveProvider() {
        String[] expectedToFail = {"shouldNotReturnSecondLock", "shouldBeAbleToLockRightAfterUnlock",
                "shouldLockAtLeastFor"};
        var builder = request();
        for (String method : expectedToFail) {
            builder.selectors(selectMethod(NaiveShedLockSuite.class, method));
        }
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(builder.build(), listener);
        TestExecutionSummary summary = listener.getSummary();
        assertThat(summary.getTestsStartedCount()).isEqualTo(expectedToFail.length);
        assertThat(summary.getFailures()).extracting(f -> f.getTestIdentifier().getDisplayName())
                .containsExactlyInAnyOrder("shouldNotReturnSecondLock()", "shouldBeAbleToLockRightAfterUnlock()",
                        "shouldLockAtLeastFor()");
    }
}
