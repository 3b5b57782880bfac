// SPDX-License-Identifier: Apache-2.0
// Prints "tag kind bits text" for a fixed, seeded list of doubles and floats, with the running
// JVM's Double.toString / Float.toString. gen_javafloat_vectors.sh runs it on Java 17 and on
// Java 19+ and keeps rows of each tag where the two disagree (and a few where they agree).
// Run as a source file: java javafloat_vectors.java
import java.io.PrintWriter;
import java.util.SplittableRandom;

public class javafloat_vectors {
	static PrintWriter out = new PrintWriter(System.out);

	static void d(String tag, double x) {
		out.println(tag + " d " + Long.toHexString(Double.doubleToRawLongBits(x)) + " "
				+ Double.toString(x));
	}

	static void f(String tag, float x) {
		out.println(tag + " f " + Integer.toHexString(Float.floatToRawIntBits(x)) + " "
				+ Float.toString(x));
	}

	public static void main(String[] args) {
		SplittableRandom r = new SplittableRandom(20240517L);

		double[] special = { 0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY,
			Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL,
			Math.nextDown(Double.MIN_NORMAL), Double.MAX_VALUE, -Double.MAX_VALUE, 0.1 + 0.2,
			1.0 / 3, 2.0 / 3, Math.PI, Math.E, 1e23, 8.41e21, 2.82879384806159E17, 5e-324 * 2 };
		for (double x : special)
			d("special", x);
		double[] layout = { 1.0, -1.5, 100.0, 4.35, 123456.789, 12345678.9, 1e-3, -1e-3,
			Math.nextDown(1e-3), Math.nextUp(1e-3), 1e-4, 1e-5, 1e-2, 0.0009999, 0.00123, 1e7,
			Math.nextDown(1e7), Math.nextUp(1e7), 9999999.0, 9999999.5, 9999999.999999998,
			1e8, 1.5e7, 0.1, 0.5, 0.25, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
		for (double x : layout)
			d("layout", x);
		for (int e = -323; e <= 308; e++) {
			double p = Double.parseDouble("1e" + e);
			d("pow10", p);
			d("pow10", Math.nextDown(p));
			d("pow10", Math.nextUp(p));
		}
		for (int i = 0; i < 4000; i++)
			d("int-long", (double) r.nextLong(1L << 53, Long.MAX_VALUE));
		for (int i = 0; i < 4000; i++) {
			if ((i & 1) == 0)
				d("int-huge", Math.scalb((double) r.nextLong(1L << 52, 1L << 53), r.nextInt(11, 971)));
			else
				d("int-huge", Double.parseDouble(r.nextInt(1, 100000) + "e" + r.nextInt(19, 300)));
		}
		for (int n = -1022; n <= 1023; n++)
			d("pow2", Math.scalb(1.0, n));
		for (int k = 1; k <= 600; k++)
			d("subnormal", k * Double.MIN_VALUE);
		for (int n = -1074; n < -1022; n++)
			d("subnormal", Math.scalb(1.0, n));
		for (int i = 0; i < 4000; i++)
			d("subnormal", Double.longBitsToDouble(r.nextLong(1L, 1L << 52)));
		for (int i = 0; i < 4000; i++)
			d("random", Double.longBitsToDouble(r.nextLong() & 0x7fefffffffffffffL));
		for (int i = 0; i < 4000; i++)
			d("short", Double.parseDouble(r.nextInt(1, 1000000) + "e" + r.nextInt(-330, 300)));

		float[] fspecial = { 0f, -0f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
			Float.MIN_VALUE, Float.MIN_NORMAL, Float.MAX_VALUE, -Float.MAX_VALUE, 0.1f, 1e7f,
			Math.nextDown(1e7f), 1e-3f, Math.nextDown(1e-3f), 6.7647527E14f, 1e10f, 3.0f,
			16777216f, 16777217f, 1.4e-45f };
		for (float x : fspecial)
			f("float-special", x);
		for (int i = 0; i < 4000; i++) {
			float x = (float) Math.scalb((double) r.nextInt(1 << 23, 1 << 24), r.nextInt(1, 104));
			f("float-int", x);
		}
		for (int n = -149; n <= 127; n++)
			f("float-pow2", Math.scalb(1.0f, n));
		for (int i = 0; i < 2000; i++)
			f("float-sub", Float.intBitsToFloat(r.nextInt(1, 1 << 23)));
		for (int i = 0; i < 4000; i++)
			f("float-random", Float.intBitsToFloat(r.nextInt() & 0x7f7fffff));
		for (int i = 0; i < 4000; i++)
			f("float-short", Float.parseFloat(r.nextInt(1, 10000) + "e" + r.nextInt(-48, 36)));
		out.flush();
	}
}
