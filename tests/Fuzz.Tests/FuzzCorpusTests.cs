using System.Reflection;

namespace XCall.Fuzz.Tests;

/// <summary>
/// The fuzz targets of this project run in `dotnet test`: every generated seed is accepted (so the seeds reach
/// past the checks), every input kept in tests/Fuzz.Tests/corpus (crashes and hangs scripts/fuzz.sh found, and
/// hand-written edge cases) runs without failing, and a short in-process mutation run over the seeds finds
/// nothing. The coverage-guided runs themselves are scripts/fuzz.sh's, outside CI.
/// </summary>
public sealed class FuzzCorpusTests
{
    private static readonly string Corpus = typeof(FuzzCorpusTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "FuzzCorpus").Value!;

    public static TheoryData<string> Targets => new(FuzzTarget.All.Select(t => t.Name));

    [Theory]
    [MemberData(nameof(Targets))]
    public void Every_seed_is_accepted(string name)
    {
        FuzzTarget target = FuzzTarget.Find(name);
        var seeds = target.Seeds().ToList();
        Assert.NotEmpty(seeds);
        foreach ((string seed, byte[] input) in seeds)
        {
            int refusals = FuzzTarget.Refusals;
            target.Run(input);
            Assert.True(refusals == FuzzTarget.Refusals, $"{name}/{seed} was refused as a protocol error");
        }
    }

    [Fact]
    public void Every_ring_seed_is_read_to_its_goodbye()
    {
        foreach ((string seed, byte[] input) in RingTarget.Seeds())
        {
            Assert.True(RingTarget.Read(input) == XCall.Transport.Shm.Ring.PollResult.Goodbye, $"ring/{seed}: the reader stopped before the goodbye");
        }
    }

    [Theory]
    [InlineData("streamed", true)] // a streamed frame's start, chunk and end, then a goodbye
    [InlineData("aborted-then-frame", true)] // a streamed frame aborted, a frame after it, then a goodbye
    [InlineData("start-inside-streamed", false)] // a frame's start inside a streamed frame: refused
    public void A_kept_ring_input_reads_as_it_was_kept_for(string file, bool toGoodbye)
    {
        int refusals = FuzzTarget.Refusals;
        XCall.Transport.Shm.Ring.PollResult? last = RingTarget.Read(FuzzTarget.ReadInput(Path.Combine(Corpus, "ring", file + ".hex")));
        if (toGoodbye)
        {
            Assert.Equal(XCall.Transport.Shm.Ring.PollResult.Goodbye, last);
        }
        else
        {
            Assert.Null(last);
            Assert.True(FuzzTarget.Refusals > refusals, $"ring/{file} was not refused");
        }
    }

    [Theory]
    [MemberData(nameof(Targets))]
    public void Every_kept_corpus_input_runs_without_failing(string name)
    {
        FuzzTarget target = FuzzTarget.Find(name);
        string[] files = Directory.GetFiles(Path.Combine(Corpus, name), "*.hex");
        Assert.NotEmpty(files);
        foreach (string file in files)
        {
            Exception? failure = Record.Exception(() => target.Run(FuzzTarget.ReadInput(file)));
            Assert.True(failure is null, $"{Path.GetFileName(file)}: {failure}");
        }
    }

    [Theory]
    [InlineData("marshal", 4000)]
    [InlineData("args", 4000)]
    [InlineData("frame", 4000)]
    [InlineData("tcp", 300)]
    [InlineData("shm", 300)]
    [InlineData("ring", 4000)]
    public void Mutated_seeds_run_without_failing(string name, int inputs)
    {
        FuzzTarget target = FuzzTarget.Find(name);
        byte[][] seeds = [.. target.Seeds().Select(s => s.Input)];
        var random = new Random(27);
        for (int i = 0; i < inputs; i++)
        {
            byte[] input = Mutate(seeds[random.Next(seeds.Length)], random);
            Exception? failure = Record.Exception(() => target.Run(input));
            Assert.True(failure is null, $"{name} input {Convert.ToHexString(input)}: {failure}");
        }
    }

    /// <summary>A few of the mutations AFL starts with: bit flips, interesting values, cuts and splices.</summary>
    private static byte[] Mutate(byte[] seed, Random random)
    {
        var bytes = new List<byte>(seed);
        int edits = 1 + random.Next(4);
        for (int e = 0; e < edits && bytes.Count > 0; e++)
        {
            int at = random.Next(bytes.Count);
            switch (random.Next(5))
            {
                case 0:
                    bytes[at] ^= (byte)(1 << random.Next(8));
                    break;
                case 1:
                    byte[] interesting = [0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe];
                    bytes[at] = interesting[random.Next(interesting.Length)];
                    break;
                case 2:
                    int[] ints = [-1, int.MinValue, int.MaxValue, 0x10000, 1 << 28];
                    byte[] value = BitConverter.GetBytes(ints[random.Next(ints.Length)]);
                    for (int i = 0; i < value.Length && at + i < bytes.Count; i++)
                    {
                        bytes[at + i] = value[i];
                    }
                    break;
                case 3:
                    bytes.RemoveRange(at, Math.Min(bytes.Count - at, 1 + random.Next(8)));
                    break;
                default:
                    bytes.InsertRange(at, seed.AsSpan(random.Next(seed.Length)).ToArray().Take(1 + random.Next(16)));
                    break;
            }
        }
        return [.. bytes];
    }
}
