"""The page's player and ``sentence_restart`` (a sentence the TTS endpoint could not resume at a sample is
replayed whole): what is still queued or playing of the void partial is silenced, the replay takes its
place, and the sentence's scheduled seconds count the replay only. In headless Chromium, real Web Audio."""

from __future__ import annotations

import pytest
from support.browser import PageSession, ReplayServer, open_page

pytestmark = pytest.mark.browser


def test_browser_sentence_restart_drops_the_void_partial(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    page.click("#speak")  # a real answer first: the page's audio context, player and run exist
    page_session.wait_for_state("done", "error", timeout_s=30)
    result = page.evaluate(
        """() => {
          const { player, run, dropVoidPartial } = window.voicePage;
          const stats = window.voiceStats;
          const second = new Float32Array(24000).fill(0.01);
          const before = stats.audioSecondsScheduled;
          run.play([second], 8);                     // sentence 8: heard whole
          run.play([second, second, second], 9);     // sentence 9: its partial, then the connection drops
          const kept = player.sources.size;
          dropVoidPartial(run, { type: "sentence_restart", sentence: 9, dropped_s: 3.0 });
          const afterDrop = {
            sources: [...player.sources].map((source) => source.sentence),
            nextStart: player.nextStart,
            sentence8End: Math.max(...[...player.sources].map((source) => source.endAt)),
            seconds9: run.sentence(9).seconds,
            scheduled: stats.audioSecondsScheduled - before,
            restarts: stats.restarts,
          };
          run.play([second], 9);                     // the replay: right after sentence 8
          const replay = [...player.sources].find((source) => source.sentence === 9);
          const seconds9 = run.sentence(9).seconds;
          const result = { kept, afterDrop, replayStart: replay.endAt - 1, seconds9 };
          player.stop();
          return result;
        }"""
    )
    assert result["kept"] == 4
    dropped = result["afterDrop"]
    assert dropped["sources"] == [8]  # every queued piece of sentence 9 is gone; sentence 8 plays on
    assert dropped["nextStart"] == pytest.approx(dropped["sentence8End"])
    assert dropped["seconds9"] == 0 and dropped["restarts"] == 1
    assert dropped["scheduled"] == pytest.approx(1.0, abs=0.05)  # the void 3 s no longer count
    assert result["replayStart"] == pytest.approx(dropped["sentence8End"], abs=1e-6)
    assert result["seconds9"] == pytest.approx(1.0)
    assert page_session.console_errors == []
