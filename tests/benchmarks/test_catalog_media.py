"""FLAC and lame: the generated WAV (valid, the same bytes every time), the timed line parsed
and fuzzed, parameters refused, the real plans on the controller."""

import wave

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.catalog import media
from benchmarks.catalog.spec import Context, ParamError, ParseError
from benchmarks.endpoints import ControllerEndpoint
from tests.benchmarks import catalog_support as support

FLAC_LOCAL = support.fixture("flac", "timed-flac1.4.2-debian12-x86_64.txt")
LAME_LOCAL = support.fixture("lame", "timed-lame3.100-debian12-x86_64.txt")


def generate_wav(tmp_path, name: str, seconds: int):
    """The setup step of the FLAC plan, run for real; the path of the WAV it wrote."""
    params = media.FLAC.clean_params({"seconds": seconds})
    ctx = Context(workdir=str(tmp_path / name))
    (tmp_path / name).mkdir()
    (setup,) = media.FLAC.plan(params, ctx).setup
    assert ControllerEndpoint().run(setup.argv, setup.timeout_s).ok
    return tmp_path / name / "input.wav"


@pytest.mark.slow
def test_the_generated_wav_is_cd_quality_stereo_of_the_asked_length(tmp_path):
    with wave.open(str(generate_wav(tmp_path, "one", 2))) as audio:
        assert (audio.getnchannels(), audio.getsampwidth(), audio.getframerate()) == (2, 2, 44100)
        assert audio.getnframes() == 2 * 44100


@pytest.mark.slow
def test_the_generated_wav_is_the_same_bytes_every_time(tmp_path):
    first, second = generate_wav(tmp_path, "a", 1), generate_wav(tmp_path, "b", 1)
    assert first.read_bytes() == second.read_bytes()
    assert len(set(first.read_bytes()[44:2044])) > 100  # neither silence nor a short pattern


@pytest.mark.parametrize(
    "benchmark, text, version",
    [(media.FLAC, FLAC_LOCAL, "flac 1.4.2"), (media.LAME, LAME_LOCAL, "LAME 64bits version 3.100")],
)
def test_it_reads_the_timed_encoding_and_the_encoders_version(benchmark, text, version):
    parsed = benchmark.parse({"measure": text}, benchmark.clean_params({}))
    support.assert_sane(benchmark, parsed)
    assert parsed.values["realtime"] == parsed.details["audio_seconds"] / parsed.values["seconds"]
    assert parsed.details["tool_version"].startswith(version)


def test_it_refuses_a_run_that_took_no_time():
    text = "ns=0 bytes_in=352844 bytes_out=1000\nflac 1.4.2\n"
    with pytest.raises(ParseError, match="encoding time"):
        media.FLAC.parse({"measure": text}, media.FLAC.clean_params({}))


@pytest.mark.parametrize("benchmark, text", [(media.FLAC, FLAC_LOCAL), (media.LAME, LAME_LOCAL)])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_parsers_give_values_or_parse_error(benchmark, text, data):
    fuzzed = data.draw(st.text() | support.mutated(text))
    support.parses_or_refuses(benchmark, {"measure": fuzzed}, benchmark.clean_params({}))


@pytest.mark.parametrize(
    "benchmark, raw",
    [
        (media.FLAC, {"level": 9}),
        (media.FLAC, {"level": "5 --output-name=/etc/passwd"}),
        (media.FLAC, {"seconds": 0}),
        (media.LAME, {"bitrate": "1000"}),
        (media.LAME, {"bitrate": "192; touch /tmp/pwned"}),
        (media.LAME, {"quality": 10}),
    ],
)
def test_it_refuses_bad_parameters(benchmark, raw):
    with pytest.raises(ParamError):
        benchmark.clean_params(raw)


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", [media.FLAC, media.LAME])
def test_the_plans_run_on_the_controller(benchmark):
    parsed = support.run_on_controller(benchmark, {"seconds": 2})
    support.assert_sane(benchmark, parsed)
    assert parsed.details["audio_seconds"] == 2
