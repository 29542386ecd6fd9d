using SharpFuzz;
using XCall.Fuzz.Tests;

// The fuzzing harness, run as `dotnet XCall.Fuzz.Tests.dll ...` (`dotnet test` runs FuzzCorpusTests instead):
// XCall.Fuzz.Tests TARGET                 the AFL loop (started by afl-fuzz through scripts/fuzz.sh)
// XCall.Fuzz.Tests seeds DIR              writes each target's seeds to DIR/TARGET/NAME
// XCall.Fuzz.Tests run TARGET FILE...     runs each input once (FILE.hex: hex text); exit 1 on a failure
// XCall.Fuzz.Tests list                   the targets and what they read
switch (args)
{
    case ["list"]:
        foreach (FuzzTarget t in FuzzTarget.All)
        {
            Console.WriteLine($"{t.Name,-8} {t.Reads}");
        }
        return 0;
    case ["seeds", string dir]:
        foreach (FuzzTarget t in FuzzTarget.All)
        {
            Directory.CreateDirectory(Path.Combine(dir, t.Name));
            foreach ((string name, byte[] input) in t.Seeds())
            {
                File.WriteAllBytes(Path.Combine(dir, t.Name, name), input);
            }
        }
        return 0;
    case ["run", string name, .. string[] files]:
        FuzzTarget target = FuzzTarget.Find(name);
        int failed = 0;
        foreach (string file in files)
        {
            try
            {
                int refusals = FuzzTarget.Refusals;
                target.Run(FuzzTarget.ReadInput(file));
                Console.WriteLine(FuzzTarget.Refusals == refusals ? $"ok     {file}" : $"ok     {file} (refused: protocol error)");
            }
            catch (Exception ex)
            {
                failed++;
                Console.WriteLine($"FAILED {file}: {ex.GetType().FullName}: {ex.Message}");
                Console.WriteLine(ex.StackTrace);
            }
        }
        return failed == 0 ? 0 : 1;
    case [string name]:
        FuzzTarget fuzzed = FuzzTarget.Find(name);
        Fuzzer.OutOfProcess.Run(stream =>
        {
            using var buffer = new MemoryStream();
            stream.CopyTo(buffer);
            fuzzed.Run(buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
        });
        return 0;
    default:
        Console.Error.WriteLine("usage: XCall.Fuzz.Tests TARGET | seeds DIR | run TARGET FILE... | list");
        return 2;
}
