using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using XCall;
using XCall.Parallel;

// A ray tracer farm: rank 0 creates one worker per other rank (round robin) and deals the lines of a 500x500
// scene out to them, a chunk of --lines lines per call, each worker with one chunk in hand at a time (a worker that
// finishes early gets more). It prints the image's SHA-256 and writes it as a PPM with --out FILE.
// Run: xcall run -n 3 -- dotnet XCall.Samples.RayFarm.dll [--lines 10] [--out image.ppm]
//      dotnet XCall.Samples.RayFarm.dll --local      renders in this process alone (the reference image)
// --adaptive lets the object manager agglomerate workers by their measured grain (Agglomeration.Adaptive, with a
// grain probe that renders the middle line once per call: a worker is made before any call was measured).
int lines = Option("--lines", 10);
string? output = Array.IndexOf(args, "--out") is int o and >= 0 ? args[o + 1] : null;
var start = Stopwatch.GetTimestamp();
byte[] image;
string how;
if (args.Contains("--local"))
{
    image = new byte[Tracer.Width * Tracer.Height * 3];
    for (int y = 0; y < Tracer.Height; y++)
    {
        Tracer.RenderLine(y, image.AsSpan(y * Tracer.Width * 3, Tracer.Width * 3));
    }
    how = "locally";
}
else
{
    Agglomeration agglomeration = args.Contains("--adaptive") ? Agglomeration.Adaptive : Agglomeration.Never;
    var types = new ParallelTypes().Add<IRayWorker>(() => new RayWorker(), agglomeration)
        .SetGrainProbe<IRayWorker>(worker => () => worker.RenderLinesAsync(Tracer.Height / 2, 1).GetAwaiter().GetResult());
    await using ParallelWorld world = await ParallelWorld.JoinAsync(types);
    if (world.Rank != 0)
    {
        return 0;
    }
    int count = Math.Max(1, world.Size - 1);
    var workers = new IRayWorker[count];
    for (int i = 0; i < count; i++)
    {
        workers[i] = await world.CreateAsync<IRayWorker>();
    }
    image = await RenderAsync(workers, lines);
    how = $"by {count} workers on ranks {string.Join(",", workers.Select(w => world.RefOf(w).Rank))}, {lines} lines per call";
}
double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
Console.WriteLine($"{Tracer.Width}x{Tracer.Height} rendered {how} in {seconds:F3} s");
Console.WriteLine($"checksum {Convert.ToHexString(SHA256.HashData(image))}");
if (output is not null)
{
    await using FileStream file = File.Create(output);
    file.Write(System.Text.Encoding.ASCII.GetBytes($"P6\n{Tracer.Width} {Tracer.Height}\n255\n"));
    file.Write(image);
}
return 0;

int Option(string name, int fallback)
{
    int at = Array.IndexOf(args, name);
    return at >= 0 ? int.Parse(args[at + 1], CultureInfo.InvariantCulture) : fallback;
}

/// <summary>Deals chunks of <paramref name="lines"/> lines to the workers, each holding one chunk at a time; the image's RGB bytes.</summary>
static async Task<byte[]> RenderAsync(IRayWorker[] workers, int lines)
{
    var image = new byte[Tracer.Width * Tracer.Height * 3];
    int next = 0;
    await Task.WhenAll(workers.Select(worker => Task.Run(async () =>
    {
        while (true)
        {
            int first = Interlocked.Add(ref next, lines) - lines;
            if (first >= Tracer.Height)
            {
                return;
            }
            int count = Math.Min(lines, Tracer.Height - first);
            byte[] rgb = await worker.RenderLinesAsync(first, count);
            rgb.CopyTo(image.AsSpan(first * Tracer.Width * 3));
        }
    })));
    return image;
}

/// <summary>A worker of the farm.</summary>
[Remotable]
public interface IRayWorker
{
    /// <summary>The RGB bytes of lines <paramref name="first"/> .. <paramref name="first"/> + <paramref name="count"/> - 1.</summary>
    Task<byte[]> RenderLinesAsync(int first, int count);
}

/// <summary>Renders lines of <see cref="Tracer"/>'s scene.</summary>
internal sealed class RayWorker : IRayWorker
{
    public Task<byte[]> RenderLinesAsync(int first, int count)
    {
        if (first < 0 || count < 0 || first + count > Tracer.Height)
        {
            throw new ArgumentOutOfRangeException(nameof(first), $"lines {first} .. {first + count - 1} are outside the image");
        }
        var rgb = new byte[count * Tracer.Width * 3];
        for (int i = 0; i < count; i++)
        {
            Tracer.RenderLine(first + i, rgb.AsSpan(i * Tracer.Width * 3, Tracer.Width * 3));
        }
        return Task.FromResult(rgb);
    }
}

/// <summary>A small Whitted-style tracer of a fixed scene: spheres on a checkered plane, one light, shadows and reflections.</summary>
internal static class Tracer
{
    public const int Width = 500;
    public const int Height = 500;
    private const int MaxDepth = 4;

    private static readonly Sphere[] s_spheres =
    [
        new(new Vec(0, 1, 5), 1, new Vec(0.9, 0.2, 0.2), 0.3),
        new(new Vec(-2.2, 0.8, 6.5), 0.8, new Vec(0.2, 0.8, 0.3), 0.2),
        new(new Vec(2.1, 0.6, 4.2), 0.6, new Vec(0.3, 0.4, 0.95), 0.5),
        new(new Vec(0.8, 0.35, 3.2), 0.35, new Vec(0.95, 0.85, 0.2), 0.1),
    ];

    private static readonly Vec s_light = new(-4, 6, -2);

    /// <summary>Writes the RGB bytes of line <paramref name="y"/> into <paramref name="rgb"/> (<see cref="Width"/> * 3 bytes).</summary>
    public static void RenderLine(int y, Span<byte> rgb)
    {
        var eye = new Vec(0, 1.2, -2);
        for (int x = 0; x < Width; x++)
        {
            double u = ((x + 0.5) / Width * 2) - 1;
            double v = 1 - ((y + 0.5) / Height * 2);
            Vec color = Trace(eye, new Vec(u, v * 0.9, 1.6).Normalized(), 0);
            rgb[(x * 3) + 0] = ToByte(color.X);
            rgb[(x * 3) + 1] = ToByte(color.Y);
            rgb[(x * 3) + 2] = ToByte(color.Z);
        }
    }

    private static byte ToByte(double c) => (byte)Math.Clamp((int)(Math.Sqrt(Math.Clamp(c, 0, 1)) * 255 + 0.5), 0, 255);

    private static Vec Trace(Vec origin, Vec direction, int depth)
    {
        if (!Hit(origin, direction, out double t, out Vec normal, out Vec albedo, out double reflect))
        {
            return new Vec(0.55, 0.7, 0.95) * (0.6 + (0.4 * direction.Y)); // sky
        }
        Vec point = origin + (direction * t);
        Vec toLight = (s_light - point).Normalized();
        bool shadowed = Hit(point + (normal * 1e-6), toLight, out double lt, out _, out _, out _) && lt < (s_light - point).Length;
        double diffuse = shadowed ? 0 : Math.Max(0, normal.Dot(toLight));
        Vec color = albedo * (0.12 + (0.88 * diffuse));
        if (depth < MaxDepth && reflect > 0)
        {
            Vec mirrored = direction - (normal * (2 * direction.Dot(normal)));
            color = (color * (1 - reflect)) + (Trace(point + (normal * 1e-6), mirrored, depth + 1) * reflect);
        }
        return color;
    }

    private static bool Hit(Vec origin, Vec direction, out double nearest, out Vec normal, out Vec albedo, out double reflect)
    {
        nearest = double.MaxValue;
        normal = default;
        albedo = default;
        reflect = 0;
        foreach (Sphere s in s_spheres)
        {
            Vec oc = origin - s.Center;
            double b = oc.Dot(direction);
            double c = oc.Dot(oc) - (s.Radius * s.Radius);
            double disc = (b * b) - c;
            if (disc < 0)
            {
                continue;
            }
            double t = -b - Math.Sqrt(disc);
            if (t > 1e-9 && t < nearest)
            {
                nearest = t;
                normal = ((origin + (direction * t)) - s.Center).Normalized();
                albedo = s.Color;
                reflect = s.Reflect;
            }
        }
        if (direction.Y < 0)
        {
            double t = -origin.Y / direction.Y; // the plane y = 0
            if (t > 1e-9 && t < nearest)
            {
                nearest = t;
                Vec p = origin + (direction * t);
                bool dark = ((int)Math.Floor(p.X) + (int)Math.Floor(p.Z)) % 2 == 0;
                normal = new Vec(0, 1, 0);
                albedo = dark ? new Vec(0.25, 0.25, 0.25) : new Vec(0.85, 0.85, 0.85);
                reflect = 0.15;
            }
        }
        return nearest < double.MaxValue;
    }

    private readonly record struct Sphere(Vec Center, double Radius, Vec Color, double Reflect);

    private readonly record struct Vec(double X, double Y, double Z)
    {
        public static Vec operator +(Vec a, Vec b) => new(a.X + b.X, a.Y + b.Y, a.Z + b.Z);

        public static Vec operator -(Vec a, Vec b) => new(a.X - b.X, a.Y - b.Y, a.Z - b.Z);

        public static Vec operator *(Vec a, double k) => new(a.X * k, a.Y * k, a.Z * k);

        public double Dot(Vec b) => (X * b.X) + (Y * b.Y) + (Z * b.Z);

        public double Length => Math.Sqrt(Dot(this));

        public Vec Normalized() => this * (1 / Length);
    }
}
