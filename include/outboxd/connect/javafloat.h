/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_JAVAFLOAT_H
#define OUTBOXD_JAVAFLOAT_H

/*
 * Java's text forms of double and float, byte for byte, in the two generations of the JDK:
 *
 * - jdk17: Double.toString / Float.toString up to Java 18 (FloatingDecimal). Usually the
 *   shortest digits, but it can differ for doubles from 2^53 and floats from 2^24 up to 2^63,
 *   printed from their exact integer value ("2.82879384806159008E17", "1.72677872E8"); for
 *   some larger doubles ("9.999999999999999E22" for 1e23); for powers of two
 *   ("7.1202363472230444E-307"); and for subnormals with few significant bits ("1.0E-323"
 *   where Java 19+ prints "9.9E-324", "1.58E-322").
 * - shortest: Java 19+ (JDK-4511638): the shortest decimal of at least two digits that rounds
 *   back to the value, the closest to it if several, the even one on a tie.
 *
 * Both use Java's layout: "123.45" for 1e-3 <= |x| < 1e7, else "1.2345E-5"; "-0.0", "NaN",
 * "Infinity", "-Infinity". Pure: appends to a struct buf, no I/O, no locale.
 */

#include "outboxd/util/buf.h"

/* javafloat_double_jdk17() - append what Java 17's Double.toString(@x) returns to @b. */
void javafloat_double_jdk17(double x, struct buf *b);

/* javafloat_float_jdk17() - append what Java 17's Float.toString(@x) returns to @b. */
void javafloat_float_jdk17(float x, struct buf *b);

/* javafloat_double_shortest() - append what Java 19+'s Double.toString(@x) returns to @b. */
void javafloat_double_shortest(double x, struct buf *b);

/* javafloat_float_shortest() - append what Java 19+'s Float.toString(@x) returns to @b. */
void javafloat_float_shortest(float x, struct buf *b);

#endif
